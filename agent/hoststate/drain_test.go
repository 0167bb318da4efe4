package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func maintenance(force bool) *wire.Intent {
	return intent(func(i *wire.Intent) { i.Mode = wire.DrainMaintenance; i.Force = force })
}

func removal(force, wipe bool) *wire.Intent {
	return intent(func(i *wire.Intent) { i.Mode = wire.DrainRemoval; i.Force = force; i.Wipe = wipe })
}

func TestMaintenanceAndRestore(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.Consumer = "cluster-a" })
	dr := maintenance(false)
	s.intents().Drain = dr
	s.step(nil)
	s.expect(ActionNone, wire.StateProvisioned)
	if !hasEvent(s.d, "DrainWaiting") || s.d.Blocked {
		t.Fatalf("want waiting for consumer: %s %v", s.d, s.d.Events)
	}
	// Management continues while waiting.
	s.edit(func(h *wire.Host) { h.Online = false })
	s.expect(ActionPowerOff, wire.StateProvisioned)
	s.ok()
	s.edit(func(h *wire.Host) { h.Consumer = "" })
	s.expect(ActionMaintenanceOn, wire.StateProvisioned)
	s.ok()
	if s.d.Status.OperationalStatus != wire.OpMaintenance || !s.d.Blocked || len(s.d.Acks) != 1 || s.d.Acks[0].CreatedIndex != dr.CreatedIndex {
		t.Fatalf("want maintenance, blocked, acked: %s %+v", s.d, s.d.Acks)
	}
	// No power assertion in maintenance.
	s.edit(func(h *wire.Host) { h.Online = true })
	if s.d.Action != ActionNone || !s.d.Blocked {
		t.Fatalf("acted in maintenance: %s", s.d)
	}
	// Restore.
	s.h.Intents.Drain = nil
	s.step(nil)
	s.expect(ActionMaintenanceOff, wire.StateProvisioned)
	if s.d.Blocked {
		t.Fatalf("the exit action must run unblocked: %s", s.d)
	}
	s.ok()
	if s.d.Status.OperationalStatus != wire.OpOK || !hasEvent(s.d, "Restored") {
		t.Fatalf("want ok after restore: %s", s.d)
	}
	s.expect(ActionPowerOn, wire.StateProvisioned)
}

func TestMaintenanceForceIgnoresConsumer(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.Consumer = "x" })
	s.intents().Drain = maintenance(true)
	s.step(nil)
	s.expect(ActionMaintenanceOn, wire.StateProvisioned)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrDetach {
		t.Fatalf("want detach error: %s", s.d)
	}
}

func TestMaintenanceWithoutNode(t *testing.T) {
	h := fullHost()
	h.BMC = wire.BMC{}
	s := newSim(t, h)
	s.intents().Drain = maintenance(false)
	s.step(nil)
	if s.d.Action != ActionNone || s.d.Status.OperationalStatus != wire.OpMaintenance || len(s.d.Acks) != 1 {
		t.Fatalf("want maintenance at once: %s", s.d)
	}
	s.h.Intents.Drain = nil
	s.step(nil)
	if s.d.Status.OperationalStatus != wire.OpDiscovered {
		t.Fatalf("want back to discovered: %s", s.d)
	}
}

func TestRemoval(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.Consumer = "c" })
	dr := removal(false, false)
	s.intents().Drain = dr
	s.step(nil)
	s.expect(ActionNone, wire.StateProvisioned)
	if !hasEvent(s.d, "DrainWaiting") {
		t.Fatalf("want waiting: %v", s.d.Events)
	}
	s.edit(func(h *wire.Host) { h.Consumer = "" })
	s.expect(ActionDetach, wire.StateProvisioned)
	if s.d.Status.OperationalStatus != wire.OpRemoving {
		t.Fatalf("want removing: %s", s.d)
	}
	// The consumer comes back: a started removal goes on.
	s.edit(func(h *wire.Host) { h.Consumer = "c" })
	s.expect(ActionDetach, wire.StateProvisioned)
	s.ok()
	if !s.d.Remove || !s.d.Blocked || s.d.Status.Extra[keyRemovalCommitted] != "true" || len(s.d.Acks) != 1 {
		t.Fatalf("want removed: %s %+v", s.d, s.d.Acks)
	}
	// Cancelling now is refused, with an event, once.
	s.h.Intents.Drain = nil
	s.step(nil)
	if !s.d.Remove || !hasEvent(s.d, "RemovalNotCancellable") || s.d.Action != ActionNone {
		t.Fatalf("want the cancel refused: %s %v", s.d, s.d.Events)
	}
	s.step(nil)
	if !s.d.Remove || hasEvent(s.d, "RemovalNotCancellable") {
		t.Fatalf("want refused once, still removed: %s", s.d)
	}
}

func TestRemovalCancelledBeforeNoReturn(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Drain = removal(false, false)
	s.step(nil)
	s.expect(ActionDetach, wire.StateProvisioned)
	s.fail(ErrClassTransient)
	s.h.Intents.Drain = nil
	s.step(nil)
	if s.d.Remove || s.d.Status.OperationalStatus != wire.OpOK || !hasEvent(s.d, "RemovalCancelled") {
		t.Fatalf("want cancelled: %s %v", s.d, s.d.Events)
	}
	// The node went away anyway (a late success): the host is not removed;
	// it re-registers, since nothing asks for it to stay detached.
	d := s.step(&Outcome{Action: ActionDetach})
	if d.Remove || d.Action != ActionRegister {
		t.Fatalf("late detach after cancel: want re-register, got %s", d)
	}
}

func TestRemovalWithWipe(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Drain = removal(true, true)
	s.step(nil)
	s.expect(ActionDeprovision, wire.StateDeprovisioning)
	s.ok()
	// The wipe erases the disks before the node goes.
	s.expect(ActionErase, wire.StateDeprovisioning)
	s.ok()
	s.expect(ActionDetach, wire.StateAvailable)
	s.ok()
	if !s.d.Remove {
		t.Fatalf("want removed: %s", s.d)
	}
}

func TestRemovalWipeFromMaintenance(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Drain = maintenance(false)
	s.step(nil)
	s.ok()
	s.h.Intents.Drain = removal(false, true)
	s.step(nil)
	s.expect(ActionMaintenanceOff, wire.StateProvisioned)
	s.ok()
	s.expect(ActionDeprovision, wire.StateDeprovisioning)
}

func TestRemovalFromMaintenanceWithoutWipe(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Drain = maintenance(false)
	s.step(nil)
	s.ok()
	s.h.Intents.Drain = removal(false, false)
	s.step(nil)
	s.expect(ActionDetach, wire.StateProvisioned)
}

func TestRemovalOfDetachedHostSkipsWipe(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Detach = intent(nil)
	s.step(nil)
	s.ok()
	s.h.Intents.Drain = removal(false, true)
	s.step(nil)
	if !s.d.Remove || s.d.Action != ActionNone || !hasEvent(s.d, "WipeSkipped") {
		t.Fatalf("want removed at once without wipe: %s %v", s.d, s.d.Events)
	}
}
