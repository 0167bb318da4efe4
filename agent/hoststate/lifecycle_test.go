package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestLifecycle(t *testing.T) {
	s := newSim(t, fullHost())
	s.expect(ActionRegister, wire.StateRegistering)
	s.step(&Outcome{Action: ActionRegister, ProvisioningID: "node-1", PoweredOn: boolp(false)})
	s.expect(ActionInspect, wire.StateInspecting)
	if s.d.Status.ProvisioningID != "node-1" {
		t.Fatalf("provisioning ID not recorded: %+v", s.d.Status)
	}
	s.step(&Outcome{Action: ActionInspect, HardwareDetails: &wire.HardwareDetails{Model: "x"}})
	s.expect(ActionProvide, wire.StateAvailable)
	s.ok()
	s.expect(ActionPowerOn, wire.StateAvailable)
	s.ok()
	s.expect(ActionNone, wire.StateAvailable)
	if !s.d.Status.PoweredOn || s.d.Status.OperationalStatus != wire.OpOK {
		t.Fatalf("want powered on, ok: %s", s.d)
	}

	s.edit(func(h *wire.Host) { h.Image = &wire.Image{URL: "http://img/a.qcow2"} })
	s.expect(ActionProvision, wire.StateProvisioning)
	s.step(&Outcome{Action: ActionProvision, InProgress: true})
	s.expect(ActionNone, wire.StateProvisioning)
	if s.d.RequeueAfter != DefaultPollInterval {
		t.Fatalf("in progress: want requeue %s, got %s", DefaultPollInterval, s.d.RequeueAfter)
	}
	s.step(nil)
	s.expect(ActionProvision, wire.StateProvisioning)
	s.ok()
	s.expect(ActionNone, wire.StateProvisioned)

	// An image change while provisioned does nothing.
	s.edit(func(h *wire.Host) { h.Image = &wire.Image{URL: "http://img/b.qcow2"} })
	s.expect(ActionNone, wire.StateProvisioned)

	// Removing it deprovisions, back to available.
	s.edit(func(h *wire.Host) { h.Image = nil })
	s.expect(ActionDeprovision, wire.StateDeprovisioning)
	s.ok()
	// Deprovision powers off; online is asserted again.
	s.expect(ActionPowerOn, wire.StateAvailable)
	s.ok()
	s.expect(ActionNone, wire.StateAvailable)
}
