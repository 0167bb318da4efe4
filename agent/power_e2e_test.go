package agent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestPowerAsTheBMCReadsIt (real coordinator, bmcsim and agent): a BMC
// that applies power changes 2–3 s after accepting them is shown
// poweredOn only once it reads On; a host whose BMC cannot be reached shows
// power unknown, not off.
func TestPowerAsTheBMCReadsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	e := newEnv(t, envOpts{bmcs: 1})
	e.s.SetKnobs(0, `{"powerDelaySeconds": 2, "powerDelayJitterSeconds": 1}`)
	e.apply(e.hostSpec("slow", "r1", 0))
	gone := e.hostSpec("gone", "r1", 0)
	gone.BMC.Address = "redfish+http://127.0.0.1:1/redfish/v1/Systems/1" // nothing listens
	e.apply(gone)
	e.startAgent("r1", "a1")

	e.waitHost("slow", 90*time.Second, "powered on as the BMC reads it", func(h *wire.Host) error {
		if h.Status == nil || !h.Status.PoweredOn {
			return fmt.Errorf("status %+v", h.Status)
		}
		if st, err := e.simState(0); err != nil || st.Power != "On" {
			t.Fatalf("status says poweredOn while the BMC reads %q (%v)", st.Power, err)
		}
		if h.Status.PowerState != wire.PowerOn {
			t.Fatalf("poweredOn with powerState %q", h.Status.PowerState)
		}
		return nil
	})
	e.waitHost("gone", 60*time.Second, "an unreached host with power unknown", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorCount == 0 && h.Status.ProvisioningState == "" {
			return fmt.Errorf("status %+v", h.Status)
		}
		if h.Status.PowerState != wire.PowerUnknown || h.Status.PoweredOn {
			return fmt.Errorf("powerState %q poweredOn %v; want unknown", h.Status.PowerState, h.Status.PoweredOn)
		}
		return nil
	})
}

// TestNoPowerStateRegisters (real processes): a BMC whose system has no
// PowerState registers and becomes available with power unknown.
func TestNoPowerStateRegisters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--profile", "no-powerstate"}})
	e.apply(e.hostSpec("nops", "r1", 0))
	e.startAgent("r1", "a1")
	e.waitHost("nops", 90*time.Second, "available, power unknown", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		if h.Status.PowerState != wire.PowerUnknown {
			return fmt.Errorf("powerState %q; want unknown", h.Status.PowerState)
		}
		return nil
	})
}
