package ironic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// The spec → clean steps mapping: order, what is left out as already
// there, and the arguments Ironic 21.4 validates.
func TestDayTwoCleanSteps(t *testing.T) {
	on, off := true, false
	named := func(vendor string, sw map[string]bool) (map[string]string, error) {
		if vendor != "HPE" {
			return nil, fmt.Errorf("%w: vendor %q", errclass.ErrUnsupported, vendor)
		}
		out := map[string]string{}
		for k, v := range sw {
			out[map[string]string{"simultaneousMultithreadingEnabled": "ProcHyperthreading", "sriovEnabled": "Sriov"}[k]] =
				map[bool]string{true: "Enabled", false: "Disabled"}[v]
		}
		return out, nil
	}
	cur := map[string]string{"ProcHyperthreading": "Enabled", "Sriov": "Enabled", "WorkloadProfile": "GeneralPowerEfficientCompute"}
	b := &wire.BIOSSpec{SimultaneousMultithreadingEnabled: &off, SRIOVEnabled: &on,
		Settings: map[string]string{"WorkloadProfile": "LowLatency"}}
	bios, err := biosSettings(b, "HPE", cur, named)
	if err != nil {
		t.Fatal(err)
	}
	// Sriov is already Enabled: not sent (no reboot for nothing).
	if got := fmt.Sprint(bios); got != "[map[name:ProcHyperthreading value:Disabled] map[name:WorkloadProfile value:LowLatency]]" {
		t.Errorf("BIOS settings %s", got)
	}
	if _, err := biosSettings(&wire.BIOSSpec{Settings: map[string]string{"NoSuch": "x"}}, "HPE", cur, named); err == nil || !strings.Contains(err.Error(), `"NoSuch"`) {
		t.Errorf("unknown attribute: %v, want it named", err)
	}
	if _, err := biosSettings(&wire.BIOSSpec{SRIOVEnabled: &on}, "Contoso", cur, named); !errors.Is(err, errclass.ErrUnsupported) {
		t.Errorf("named switch, unknown vendor: %v", err)
	}
	if _, err := biosSettings(&wire.BIOSSpec{SRIOVEnabled: &on}, "HPE", cur, nil); !errors.Is(err, errclass.ErrUnsupported) {
		t.Errorf("named switch without a mapping: %v", err)
	}

	size, disks := 100, 2
	raid := &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{
		{Name: "os", Level: "1", SizeGibibytes: &size, Rotational: &off, NumberOfPhysicalDisks: &disks, Controller: "RAID.1"},
		{Level: "0", PhysicalDisks: []string{"Disk.0", "Disk.1"}}}}
	ld, _ := json.Marshal(logicalDisks(raid))
	if want := `[{"size_gb":100,"raid_level":"1","volume_name":"os","is_root_volume":true,"disk_type":"ssd","number_of_physical_disks":2,"controller":"RAID.1"},` +
		`{"size_gb":null,"raid_level":"0","physical_disks":["Disk.0","Disk.1"]}]`; string(ld) != want {
		t.Errorf("logical disks\n%s\nwant\n%s", ld, want)
	}

	fw := []wire.FirmwareComponent{{Component: "bios", URL: "http://a/U46.bin", Checksum: "sha256:" + strings.Repeat("a", 64)}}
	steps := cleanSteps(firmwareImages(fw), bios, raid)
	if got := stepNames(steps); got != "management.update_firmware, bios.apply_configuration, raid.delete_configuration, raid.create_configuration" {
		t.Errorf("steps %s", got)
	}
	img := steps[0].Args["firmware_images"].([]map[string]any)[0]
	if img["checksum"] != strings.Repeat("a", 64) || img["source"] != "http" || img["url"] != "http://a/U46.bin" {
		t.Errorf("firmware image %v", img)
	}
	raid.KeepExisting = true
	if got := stepNames(cleanSteps(nil, nil, raid)); got != "raid.create_configuration" {
		t.Errorf("keepExisting steps %s", got)
	}
	if dayTwoFingerprint(provisioner.DayTwoSpec{RAID: raid}) == dayTwoFingerprint(provisioner.DayTwoSpec{Firmware: fw}) {
		t.Error("fingerprints of different specs agree")
	}
}
