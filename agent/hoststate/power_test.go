package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestPowerAssertedInSteadyStates(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.Online = false })
	s.expect(ActionPowerOff, wire.StateProvisioned)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrPowerManagement || s.d.Status.OperationalStatus != wire.OpError {
		t.Fatalf("want power management error: %s", s.d)
	}
	s.now = s.now.Add(DefaultBackoffBase * 2)
	s.step(nil)
	s.expect(ActionPowerOff, wire.StateProvisioned)
	s.step(&Outcome{Action: ActionPowerOff, PoweredOn: boolp(false)})
	s.expect(ActionNone, wire.StateProvisioned)
	if s.d.Status.PoweredOn || s.d.Status.ErrorType != "" {
		t.Fatalf("want off, no error: %s", s.d)
	}
	// Idempotent: nothing to re-run.
	d := Step(Input{Host: s.h, Now: s.now})
	if d.Action != ActionNone || len(d.Events) != 0 {
		t.Fatalf("re-ran a finished action: %s", d)
	}
}

func TestNoPowerWhileTransitioning(t *testing.T) {
	s := newSim(t, fullHost())
	s.ok()
	s.expect(ActionInspect, wire.StateInspecting)
	s.edit(func(h *wire.Host) { h.Online = false })
	s.expect(ActionInspect, wire.StateInspecting)
}

func TestOutcomeOfUnexpectedActionIsRecorded(t *testing.T) {
	// A power-on outcome arriving after the host moved on is recorded
	// (facts) without changing the provisioning state.
	s := provisionedSim(t)
	s.step(&Outcome{Action: ActionInspect, HardwareDetails: &wire.HardwareDetails{Model: "late"}})
	if s.d.Status.ProvisioningState != wire.StateProvisioned || s.d.Status.HardwareDetails.Model != "late" {
		t.Fatalf("want facts recorded, state kept: %s", s.d)
	}
}

func TestStaleErrorClearedWhenNothingLeftToRetry(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.Online = false })
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrPowerManagement {
		t.Fatalf("setup: %s", s.d)
	}
	// The operator gives up on powering it off: nothing to retry any more.
	s.edit(func(h *wire.Host) { h.Online = true })
	if s.d.Status.ErrorType != "" || s.d.Status.OperationalStatus != wire.OpOK || !hasEvent(s.d, "ErrorCleared") {
		t.Fatalf("want the error cleared: %s", s.d)
	}
	// A removal cancelled after its detach failed leaves no error behind.
	s.intents().Drain = removal(false, false)
	s.step(nil)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrDetach {
		t.Fatalf("setup: %s", s.d)
	}
	s.h.Intents.Drain = nil
	s.step(nil)
	if s.d.Status.ErrorType != "" || s.d.Status.OperationalStatus != wire.OpOK {
		t.Fatalf("want ok after cancel: %s", s.d)
	}
}
