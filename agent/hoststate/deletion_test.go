package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestDeleteProvisioned(t *testing.T) {
	s := provisionedSim(t)
	s.h.DeletionRequested = true
	s.step(nil)
	s.expect(ActionDeprovision, wire.StateDeprovisioning)
	s.ok()
	s.expect(ActionDelete, wire.StateDeleting)
	s.ok()
	if !s.d.Remove || !s.d.Blocked {
		t.Fatalf("want removed: %s", s.d)
	}
}

func TestDeleteAvailable(t *testing.T) {
	for _, ext := range []bool{false, true} {
		h := fullHost()
		h.ExternallyProvisioned = ext
		s := newSim(t, h)
		s.settle()
		s.h.DeletionRequested = true
		s.step(nil)
		s.expect(ActionPowerOff, wire.StatePoweringOffBeforeDelete)
		s.ok()
		s.expect(ActionDelete, wire.StateDeleting)
		s.fail(ErrClassNotFound) // already gone: fine
		if !s.d.Remove {
			t.Fatalf("want removed: %s", s.d)
		}
	}
}

func TestDeletePowerOffGivesUp(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	s.h.DeletionRequested = true
	s.step(nil)
	for i := 1; i < DefaultMaxDeleteTries; i++ {
		s.expect(ActionPowerOff, wire.StatePoweringOffBeforeDelete)
		s.fail(ErrClassFailed)
		if s.d.Status.ErrorType != wire.ErrPowerManagement {
			t.Fatalf("want power management error: %s", s.d)
		}
		s.now = s.now.Add(DefaultBackoffBase << 10)
		s.step(nil)
	}
	s.expect(ActionPowerOff, wire.StatePoweringOffBeforeDelete)
	s.fail(ErrClassFailed)
	s.expect(ActionDelete, wire.StateDeleting)
	if !hasEvent(s.d, "DeleteStepAbandoned") {
		t.Fatalf("want an event for the abandoned power-off: %v", s.d.Events)
	}
	s.ok()
	if !s.d.Remove {
		t.Fatalf("want removed: %s", s.d)
	}
}

func TestDeleteDeprovisionGivesUp(t *testing.T) {
	s := provisionedSim(t)
	s.h.DeletionRequested = true
	s.step(nil)
	for i := 1; i < DefaultMaxDeleteTries; i++ {
		s.expect(ActionDeprovision, wire.StateDeprovisioning)
		s.fail(ErrClassFailed)
		s.now = s.now.Add(DefaultBackoffBase << 10)
		s.step(nil)
	}
	s.fail(ErrClassFailed)
	s.expect(ActionDelete, wire.StateDeleting)
	if !hasEvent(s.d, "DeleteStepAbandoned") {
		t.Fatalf("want an event: %v", s.d.Events)
	}
}

func TestDeleteRegistering(t *testing.T) {
	s := newSim(t, fullHost())
	s.expect(ActionRegister, wire.StateRegistering)
	s.h.DeletionRequested = true
	s.step(nil)
	if !s.d.Remove || s.d.Action != ActionNone {
		t.Fatalf("want removed at once: %s", s.d)
	}
}

func TestDeleteInMaintenance(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Drain = maintenance(false)
	s.step(nil)
	s.ok()
	s.h.DeletionRequested = true
	s.step(nil)
	s.expect(ActionDelete, wire.StateDeleting)
	s.ok()
	if !s.d.Remove {
		t.Fatalf("want removed: %s", s.d)
	}
}

func TestDeleteWithoutBMC(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.BMC = wire.BMC{} })
	s.h.DeletionRequested = true
	s.step(nil)
	s.expect(ActionDelete, wire.StateDeleting)
	if !hasEvent(s.d, "DeleteWithoutBMC") {
		t.Fatalf("want a warning: %v", s.d.Events)
	}
}

func TestNodeLostDuringDeletion(t *testing.T) {
	s := provisionedSim(t)
	s.h.DeletionRequested = true
	s.step(nil)
	s.expect(ActionDeprovision, wire.StateDeprovisioning)
	s.fail(ErrClassNotFound)
	if !s.d.Remove {
		t.Fatalf("want removed: %s", s.d)
	}
}

func TestDeleteFailureRetries(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	s.h.DeletionRequested = true
	s.step(nil)
	s.ok()
	s.expect(ActionDelete, wire.StateDeleting)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrDeprovisioning || s.d.Remove {
		t.Fatalf("want deprovisioning error, retried: %s", s.d)
	}
}
