package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// provisionedSim is a host provisioned and settled.
func provisionedSim(t *testing.T) *sim {
	t.Helper()
	h := fullHost()
	h.Image = &wire.Image{URL: "http://i"}
	s := newSim(t, h)
	s.settle()
	s.expect(ActionNone, wire.StateProvisioned)
	return s
}

func TestDetachHonoured(t *testing.T) {
	for _, state := range []string{wire.StateAvailable, wire.StateProvisioned, wire.StateExternallyProvisioned} {
		t.Run(state, func(t *testing.T) {
			h := fullHost()
			switch state {
			case wire.StateProvisioned:
				h.Image = &wire.Image{URL: "http://i"}
			case wire.StateExternallyProvisioned:
				h.ExternallyProvisioned = true
			}
			s := newSim(t, h)
			s.settle()
			s.expect(ActionNone, state)
			det := intent(nil)
			s.intents().Detach = det
			s.step(nil)
			s.expect(ActionDetach, state)
			if s.d.Blocked || len(s.d.Acks) != 0 {
				t.Fatalf("not yet detached: %s %v", s.d, s.d.Acks)
			}
			s.ok()
			s.expect(ActionNone, state)
			if !s.d.Blocked || s.d.Status.OperationalStatus != wire.OpDetached || s.d.Status.ProvisioningID != "" {
				t.Fatalf("want detached and blocked: %s", s.d)
			}
			if len(s.d.Acks) != 1 || s.d.Acks[0].Kind != wire.IntentDetach || s.d.Acks[0].CreatedIndex != det.CreatedIndex || s.d.Acks[0].Drop {
				t.Fatalf("want the detach acknowledged: %+v", s.d.Acks)
			}
			// Nothing touches the host: power, image, resume, drain.
			for _, edit := range []func(h *wire.Host){
				func(h *wire.Host) { h.Online = !h.Online },
				func(h *wire.Host) { h.Image = nil },
				func(h *wire.Host) { h.Image = &wire.Image{URL: "http://other"} },
				func(h *wire.Host) { h.BMC = wire.BMC{} },
				func(h *wire.Host) { h.Intents.Drain = intent(func(i *wire.Intent) { i.Mode = wire.DrainMaintenance }) },
			} {
				s.edit(edit)
				if s.d.Action != ActionNone || !s.d.Blocked || s.d.Status.OperationalStatus != wire.OpDetached {
					t.Fatalf("detached host acted: %s", s.d)
				}
			}
		})
	}
}

func TestDetachWaitsForCurrentOperation(t *testing.T) {
	h := fullHost()
	h.Image = &wire.Image{URL: "http://i"}
	s := newSim(t, h)
	s.ok()
	s.intents().Detach = intent(nil)
	s.step(nil)
	s.expect(ActionInspect, wire.StateInspecting)
	if !hasEvent(s.d, "DetachWaiting") {
		t.Fatalf("no DetachWaiting event: %v", s.d.Events)
	}
	s.ok()
	if hasEvent(s.d, "DetachWaiting") {
		t.Fatalf("DetachWaiting recorded twice")
	}
	for s.d.Action != ActionDetach {
		if s.d.Action == ActionNone {
			t.Fatalf("stuck: %s", s.d)
		}
		s.ok()
	}
	// It waited until available: provisioning never started.
	s.expect(ActionDetach, wire.StateAvailable)
	s.ok()
	if s.d.Status.OperationalStatus != wire.OpDetached {
		t.Fatalf("want detached: %s", s.d)
	}
}

func TestForcedDetach(t *testing.T) {
	h := fullHost()
	s := newSim(t, h)
	s.ok()
	s.expect(ActionInspect, wire.StateInspecting)
	s.intents().Detach = intent(func(i *wire.Intent) { i.Force = true })
	s.step(nil)
	s.expect(ActionDetach, wire.StateInspecting)
	s.ok()
	if s.d.Status.OperationalStatus != wire.OpDetached {
		t.Fatalf("want detached: %s", s.d)
	}
	// Re-attached mid-operation: start again from registration.
	s.h.Intents.Detach = nil
	s.step(nil)
	s.expect(ActionRegister, wire.StateRegistering)
}

func TestDetachBeforeRegistration(t *testing.T) {
	s := newSim(t, fullHost())
	s.expect(ActionRegister, wire.StateRegistering)
	s.intents().Detach = intent(nil)
	s.step(nil)
	if s.d.Action != ActionNone || s.d.Status.OperationalStatus != wire.OpDetached || len(s.d.Acks) != 1 {
		t.Fatalf("nothing registered yet: want detached at once: %s", s.d)
	}
}

func TestForcedDetachWithoutNode(t *testing.T) {
	h := fullHost()
	h.BMC.Credentials = ""
	s := newSim(t, h)
	s.expect(ActionNone, wire.StateRegistering)
	s.intents().Detach = intent(func(i *wire.Intent) { i.Force = true })
	s.step(nil)
	if s.d.Action != ActionNone || s.d.Status.OperationalStatus != wire.OpDetached || len(s.d.Acks) != 1 || !s.d.Blocked {
		t.Fatalf("want detached at once: %s", s.d)
	}
}

func TestDetachFailureAndNotFound(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Detach = intent(nil)
	s.step(nil)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrDetach || s.d.Action != ActionNone {
		t.Fatalf("want detach error: %s", s.d)
	}
	s.now = s.now.Add(DefaultBackoffBase * 4)
	s.step(nil)
	s.expect(ActionDetach, wire.StateProvisioned)
	s.fail(ErrClassNotFound) // the node is already gone: that is success
	if s.d.Status.OperationalStatus != wire.OpDetached || s.d.Status.ErrorCount != 0 {
		t.Fatalf("not-found on detach must count as detached: %s", s.d)
	}
}

func TestReattachReadopts(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Detach = intent(nil)
	s.step(nil)
	s.ok()
	s.h.Intents.Detach = nil
	s.step(nil)
	s.expect(ActionRegister, wire.StateProvisioned)
	if !hasEvent(s.d, "Reattached") || s.d.Blocked {
		t.Fatalf("want re-attached, unblocked: %s %v", s.d, s.d.Events)
	}
	s.ok()
	s.expect(ActionAdopt, wire.StateProvisioned)
	s.ok()
	s.expect(ActionNone, wire.StateProvisioned)
	if s.d.Status.OperationalStatus != wire.OpOK {
		t.Fatalf("want ok: %s", s.d)
	}
}

func TestReattachAvailableProvides(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	s.intents().Detach = intent(nil)
	s.step(nil)
	s.ok()
	s.h.Intents.Detach = nil
	s.step(nil)
	s.expect(ActionRegister, wire.StateAvailable)
	s.ok()
	s.expect(ActionProvide, wire.StateAvailable)
}

func TestDeleteDetached(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Detach = intent(nil)
	s.step(nil)
	s.ok()
	s.h.DeletionRequested = true
	s.step(nil)
	if s.d.Action != ActionNone || !s.d.Remove || s.d.Status.ProvisioningState != wire.StateDeleting {
		t.Fatalf("detached host must be deleted without any action: %s", s.d)
	}
}

func TestDeleteWithPendingDetachFinishesDetachFirst(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Detach = intent(nil)
	s.h.DeletionRequested = true
	s.step(nil)
	s.expect(ActionDetach, wire.StateProvisioned)
	s.ok()
	if !s.d.Remove || s.d.Action != ActionNone {
		t.Fatalf("want removed after detach, never deprovisioned: %s", s.d)
	}
}
