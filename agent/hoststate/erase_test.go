package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestEraseAfterDeprovisionWithCleaning(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.AutomatedCleaningMode = wire.CleaningMetadata; h.Image = nil })
	s.expect(ActionDeprovision, wire.StateDeprovisioning)
	s.ok()
	s.expect(ActionErase, wire.StateDeprovisioning)
	s.step(&Outcome{Action: ActionErase, InProgress: true})
	s.step(nil)
	s.expect(ActionErase, wire.StateDeprovisioning)
	// A drive that cannot be erased: a deprovisioning error, never available.
	s.step(&Outcome{Action: ActionErase, Err: ErrClassFailed, Message: "drive Disk1 cannot be erased"})
	if st := s.d.Status; st.ProvisioningState != wire.StateDeprovisioning || st.ErrorType != wire.ErrDeprovisioning {
		t.Fatalf("want a deprovisioning error in deprovisioning: %s", s.d)
	}
	s.intents().Resume = intent(nil)
	s.step(nil)
	s.expect(ActionErase, wire.StateDeprovisioning)
	s.step(&Outcome{Action: ActionErase, Message: "Disk1: Drive.SecureErase"})
	s.settle()
	if s.d.Status.ProvisioningState != wire.StateAvailable || s.d.Status.ErrorType != "" {
		t.Fatalf("want available: %s", s.d)
	}
}

func TestNoEraseWithoutCleaning(t *testing.T) {
	for _, mode := range []string{"", wire.CleaningDisabled} {
		s := provisionedSim(t)
		s.edit(func(h *wire.Host) { h.AutomatedCleaningMode = mode; h.Image = nil })
		s.expect(ActionDeprovision, wire.StateDeprovisioning)
		s.ok()
		if s.d.Status.ProvisioningState != wire.StateAvailable || s.d.Action == ActionErase {
			t.Fatalf("mode %q: want available without an erase: %s", mode, s.d)
		}
	}
}

func TestEraseSkippedWhenCleaningDisabled(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.AutomatedCleaningMode = wire.CleaningMetadata; h.Image = nil })
	s.ok()
	s.expect(ActionErase, wire.StateDeprovisioning)
	s.edit(func(h *wire.Host) { h.AutomatedCleaningMode = wire.CleaningDisabled })
	if s.d.Status.ProvisioningState != wire.StateAvailable || !hasEvent(s.d, "EraseSkipped") {
		t.Fatalf("want available with EraseSkipped: %s", s.d)
	}
}
