package ctl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/api"
)

// host get shows what registration learnt about the BMC: what it is, where
// images go and how, and what it lacks.
func TestHostDetailShowsBMCDetails(t *testing.T) {
	h := &api.Host{Name: "h1", Rack: "r1", BMC: api.BMC{Address: "redfish://10.0.0.1/redfish/v1/Systems/1"},
		Status: &api.HostStatus{ProvisioningState: "available", OperationalStatus: "OK",
			BMCDetails: &api.BMCDetails{Protocol: "redfish", RedfishVersion: "1.6.0", Vendor: "HPE", Model: "iLO 5",
				FirmwareVersion: "2.72", Auth: "basic", System: "/redfish/v1/Systems/1", BootModes: []string{"UEFI", "Legacy"},
				Problems: []string{"no virtual media device taking CD or DVD under Systems/1 or Managers/1"}}}}
	var b bytes.Buffer
	hostDetail(&b, h)
	out := b.String()
	for _, want := range []string{
		"BMC is", "redfish 1.6.0, HPE iLO 5, firmware 2.72, basic auth, system /redfish/v1/Systems/1, boot UEFI/Legacy",
		"none taking CD or DVD: images cannot be provisioned through this BMC",
		"BMC lacks", "no virtual media device taking CD or DVD under Systems/1 or Managers/1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("host get lacks %q:\n%s", want, out)
		}
	}
	h.Status.BMCDetails.VirtualMedia, h.Status.BMCDetails.VirtualMediaMethod = "/redfish/v1/Managers/1/VirtualMedia/2", "actions"
	h.Status.BMCDetails.Problems = nil
	b.Reset()
	hostDetail(&b, h)
	if out := b.String(); !strings.Contains(out, "/redfish/v1/Managers/1/VirtualMedia/2 (actions)") || strings.Contains(out, "BMC lacks") {
		t.Errorf("host get with a virtual media device:\n%s", out)
	}
}
