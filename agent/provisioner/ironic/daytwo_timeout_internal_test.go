package ironic

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestIronicDayTwoServiceTimeout: a day-two clean still running in Ironic
// past ServiceTimeout is ErrServiceTimeout, whatever the BMC shows; the
// message says whether the BMC's firmware inventory already shows every
// component at its version (Ironic missed its task's end) or which one is
// not there yet, and that rackfence changes no power. Ironic cannot be made to run a clean past a timeout on
// demand, so the node is the one Ironic would answer and no call reaches
// Ironic on this path.
func TestIronicDayTwoServiceTimeout(t *testing.T) {
	spec := provisioner.DayTwoSpec{Firmware: []wire.FirmwareComponent{{Component: "bmc", URL: "http://fw/bmc.bin", Version: "2.0"}}}
	n := &nodes.Node{UUID: "n-1", ProvisionState: string(nodes.Cleaning),
		CleanStep: map[string]any{"interface": "management", "step": "update_firmware"}}
	h := provisioner.Host{Name: "h1"}
	for _, tc := range []struct {
		name    string
		pending []wire.FirmwareComponent
		says    string
	}{
		{"inventory at version", nil, "the BMC's firmware inventory already shows every component at its version"},
		{"inventory not at version", spec.Firmware, "the BMC's firmware inventory still shows bmc (want 2.0) not at its version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			p := &Provisioner{cfg: Config{ServiceTimeout: time.Minute,
				FirmwarePending: func(_ context.Context, got provisioner.Host, fw []wire.FirmwareComponent) ([]wire.FirmwareComponent, error) {
					asked++
					if got.Name != "h1" || len(fw) != 1 || fw[0].Component != "bmc" {
						t.Errorf("inventory asked for %s %+v", got.Name, fw)
					}
					return tc.pending, nil
				}}}
			m := dayTwoMark{State: markRunning, Started: time.Now().Add(-2 * time.Minute)}
			res, err := p.followClean(context.Background(), h, n, m, spec)
			if !errors.Is(err, ErrServiceTimeout) {
				t.Fatalf("a clean past its timeout: %+v, %v", res, err)
			}
			for _, want := range []string{"host h1", "node n-1 is still \"cleaning\" in step management.update_firmware",
				"(timeout 1m0s)", tc.says, "no power change from rackfence", "resume the host"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
			if asked != 1 || res.InProgress {
				t.Errorf("inventory read %d times, result %+v", asked, res)
			}
		})
	}
}
