package bmc

import "testing"

func TestFindFirmware(t *testing.T) {
	items := []FirmwareItem{
		{URI: "/redfish/v1/UpdateService/FirmwareInventory/1", ID: "1", Name: "iLO 5", Version: "3.03", RelatedItems: []string{"/redfish/v1/Managers/1"}},
		{URI: "/redfish/v1/UpdateService/FirmwareInventory/2", ID: "2", Name: "System ROM", Version: "U46 v1.72 (09/22/2022)", RelatedItems: []string{"/redfish/v1/Systems/1/Bios"}},
		{URI: "/redfish/v1/UpdateService/FirmwareInventory/NIC.1", ID: "NIC.1", Name: "NIC"},
	}
	for comp, want := range map[string]string{"bmc": "1", "bios": "2", "2": "2", "System ROM": "2", "nic:NIC.1": "NIC.1"} {
		if it, ok := FindFirmware(items, comp); !ok || it.ID != want {
			t.Errorf("%s: got %+v %v, want %s", comp, it, ok, want)
		}
	}
	if _, ok := FindFirmware(items, "nope"); ok {
		t.Errorf("nope found")
	}
	for _, tc := range []struct {
		have, want string
		ok         bool
	}{{"3.10", "3.10", true}, {"U46 v1.80 (01/01/2024)", "v1.80", true}, {"3.03", "3.10", false}, {"3.03", "", false}} {
		if got := VersionMatches(tc.have, tc.want); got != tc.ok {
			t.Errorf("VersionMatches(%q, %q) = %v", tc.have, tc.want, got)
		}
	}
}
