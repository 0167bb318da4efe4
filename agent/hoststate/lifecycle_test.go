package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/api"
)

func TestLifecycle(t *testing.T) {
	s := newSim(t, fullHost())
	s.expect(ActionRegister, api.StateRegistering)
	s.step(&Outcome{Action: ActionRegister, ProvisioningID: "node-1", PoweredOn: boolp(false)})
	s.expect(ActionInspect, api.StateInspecting)
	if s.d.Status.ProvisioningID != "node-1" {
		t.Fatalf("provisioning ID not recorded: %+v", s.d.Status)
	}
	s.step(&Outcome{Action: ActionInspect, HardwareDetails: &api.HardwareDetails{Model: "x"}})
	s.expect(ActionProvide, api.StateAvailable)
	s.ok()
	s.expect(ActionPowerOn, api.StateAvailable)
	s.ok()
	s.expect(ActionNone, api.StateAvailable)
	if !s.d.Status.PoweredOn || s.d.Status.OperationalStatus != api.OpOK {
		t.Fatalf("want powered on, ok: %s", s.d)
	}

	s.edit(func(h *api.Host) { h.Image = &api.Image{URL: "http://img/a.qcow2"} })
	s.expect(ActionProvision, api.StateProvisioning)
	s.step(&Outcome{Action: ActionProvision, InProgress: true})
	s.expect(ActionNone, api.StateProvisioning)
	if s.d.RequeueAfter != DefaultPollInterval {
		t.Fatalf("in progress: want requeue %s, got %s", DefaultPollInterval, s.d.RequeueAfter)
	}
	s.step(nil)
	s.expect(ActionProvision, api.StateProvisioning)
	s.ok()
	s.expect(ActionNone, api.StateProvisioned)

	// An image change while provisioned does nothing.
	s.edit(func(h *api.Host) { h.Image = &api.Image{URL: "http://img/b.qcow2"} })
	s.expect(ActionNone, api.StateProvisioned)

	// Removing it deprovisions, back to available.
	s.edit(func(h *api.Host) { h.Image = nil })
	s.expect(ActionDeprovision, api.StateDeprovisioning)
	s.ok()
	// Deprovision powers off; online is asserted again.
	s.expect(ActionPowerOn, api.StateAvailable)
	s.ok()
	s.expect(ActionNone, api.StateAvailable)
}
