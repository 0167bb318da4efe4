package ctl

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/api"
)

// host get on a host whose BMC lacks a virtual CD, and an IPMI one.
func TestHostDetailBMC(t *testing.T) {
	var b strings.Builder
	hostDetail(&b, &api.Host{Name: "h", Rack: "r1", Status: &api.HostStatus{ProvisioningState: api.StateAvailable,
		HardwareDetails: &api.HardwareDetails{Accelerators: []api.Accelerator{{Name: "F1", Type: "FPGA"}}},
		BMCDetails: &api.BMCDetails{Protocol: "redfish", RedfishVersion: "1.11.0", Auth: "basic", System: "/redfish/v1/Systems/1",
			Problems: []string{"no virtual media device taking CD or DVD under Systems/1 or Managers/1"}}}})
	lines := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			lines[k] = strings.TrimSpace(v)
		}
	}
	for k, want := range map[string]string{
		"Hardware":    "1 accelerator",
		"BMC details": "redfish 1.11.0, auth basic, system /redfish/v1/Systems/1, no virtual media",
		"BMC lacks":   "no virtual media device taking CD or DVD under Systems/1 or Managers/1",
	} {
		if lines[k] != want {
			t.Errorf("host get %s: %q; want %q:\n%s", k, lines[k], want, b.String())
		}
	}
	if got := bmcSummary(&api.BMCDetails{Protocol: "ipmi", Auth: "ipmi"}); got != "ipmi, auth ipmi" {
		t.Errorf("IPMI BMC details %q", got)
	}
}
