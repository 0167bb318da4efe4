package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestFirstHealthReadFollowsInspection: a new host's first hardware health
// read comes after its inspection and takes the system document the
// inspection read expanded: from registration to the health in the status
// the BMC is asked for the storage collection never (it came inline) and
// for the chassis once. A refresh of an hour keeps a second read out.
func TestFirstHealthReadFollowsInspection(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a simulated BMC for seconds")
	}
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c, _, _ := newRack(t, agentOpts{refresh: time.Hour, tune: func(cfg *Config) {
		p, err := direct.New(direct.Config{Guard: cfg.Guard, BMC: bmc.Options{Timeout: 20 * time.Second, MutationTimeout: 20 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Provisioner = p
	}})
	h := fakeHost("ho0", "r1", 0)
	h.BMC.Address, h.BootMACAddress, h.Online = sim.Address(0), sim.MAC(0), false
	c.Apply(h)
	got := c.WaitHost("ho0", waitLong, "available with its health", func(h *wire.Host) error {
		if err := healthIs(wire.HardwareOK, "")(h); err != nil {
			return err
		}
		return stateIs(wire.StateAvailable, wire.OpOK)(h)
	})
	if got.Status.HardwareDetails == nil || got.Status.Health.Components[wire.HealthStorage] == "" {
		t.Fatalf("status %+v: hardware details or storage health missing", got.Status)
	}
	gets := sim.State(0).Gets
	sys := got.Status.BMCDetails.System
	if n := gets[sys+"/Storage?$expand=."] + gets[sys+"/Storage"]; n != 0 {
		t.Errorf("the storage collection read %d times: want none (inline in the inspection's system document): %v", n, gets)
	}
	chassis := 0
	for p, n := range gets {
		if strings.HasPrefix(p, "/redfish/v1/Chassis/") {
			chassis += n
		}
	}
	if chassis != 1 {
		t.Errorf("the chassis read %d times: want once: %v", chassis, gets)
	}
}
