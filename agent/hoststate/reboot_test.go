package hoststate

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestRebootHard(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Reboot = intent(func(i *wire.Intent) { i.Mode = wire.RebootHard })
	s.step(nil)
	s.expect(ActionPowerOff, wire.StateProvisioned)
	s.step(&Outcome{Action: ActionPowerOff, PoweredOn: boolp(false)})
	s.expect(ActionPowerOn, wire.StateProvisioned)
	if s.h.Intents.Reboot == nil {
		t.Fatalf("reboot dropped before the power-on: %s", s.d)
	}
	s.step(&Outcome{Action: ActionPowerOn, PoweredOn: boolp(true)})
	s.expect(ActionNone, wire.StateProvisioned)
	if s.h.Intents.Reboot != nil || !hasEvent(s.d, "Rebooted") || !s.d.Status.PoweredOn {
		t.Fatalf("want the reboot dropped with a Rebooted event, host on: %s %+v", s.d, s.h.Intents)
	}
	// Done once: stepping again changes nothing.
	if d := Step(Input{Host: s.h, Now: s.now}); d.Action != ActionNone || len(d.Events) != 0 {
		t.Fatalf("reboot repeated: %s", d)
	}
}

func TestRebootSoftFallsBackToHard(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Reboot = intent(func(i *wire.Intent) { i.Mode = wire.RebootSoft })
	s.step(nil)
	s.expect(ActionSoftPowerOff, wire.StateProvisioned)
	// The OS is still shutting down: asked again after the poll interval.
	s.step(&Outcome{Action: ActionSoftPowerOff, PoweredOn: boolp(true), InProgress: true})
	if s.d.Action != ActionNone || s.d.RequeueAfter != DefaultPollInterval {
		t.Fatalf("want a poll after %s: %s", DefaultPollInterval, s.d)
	}
	s.now = s.now.Add(DefaultPollInterval)
	s.step(nil)
	s.expect(ActionSoftPowerOff, wire.StateProvisioned)
	// Past the soft power-off timeout: hard power-off, with a Warning.
	s.now = s.now.Add(DefaultSoftPowerOffTimeout)
	held := s.step(&Outcome{Action: ActionSoftPowerOff, PoweredOn: boolp(true), InProgress: true})
	s.step(nil)
	s.expect(ActionPowerOff, wire.StateProvisioned)
	if !hasEvent(held, "SoftPowerOffTimedOut") && !hasEvent(s.d, "SoftPowerOffTimedOut") {
		t.Fatalf("want a SoftPowerOffTimedOut event: %+v", s.d.Events)
	}
	s.step(&Outcome{Action: ActionPowerOff, PoweredOn: boolp(false)})
	s.expect(ActionPowerOn, wire.StateProvisioned)
	if s.d.Status.Extra[keySoftOffSince] != "" {
		t.Fatalf("soft power-off start kept after the host went off: %v", s.d.Status.Extra)
	}
	s.ok()
	if s.h.Intents.Reboot != nil {
		t.Fatalf("reboot not dropped: %s", s.d)
	}
}

func TestRebootSoftWithinTimeout(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Reboot = intent(func(i *wire.Intent) { i.Mode = wire.RebootSoft })
	s.step(nil)
	s.step(&Outcome{Action: ActionSoftPowerOff, PoweredOn: boolp(false)})
	s.expect(ActionPowerOn, wire.StateProvisioned)
}

func TestPowerOffHoldsKeepHostOff(t *testing.T) {
	s := provisionedSim(t)
	a := intent(func(i *wire.Intent) { i.Mode = wire.RebootHard; i.Requester = "a" })
	b := intent(func(i *wire.Intent) { i.Mode = wire.RebootSoft; i.Requester = "b" })
	s.intents().PowerOff = map[string]*wire.Intent{"a": a, "b": b}
	s.step(nil)
	s.expect(ActionPowerOff, wire.StateProvisioned) // one hold asks hard
	s.step(&Outcome{Action: ActionPowerOff, PoweredOn: boolp(false)})
	s.expect(ActionNone, wire.StateProvisioned)
	if !s.h.Intents.PowerOff["a"].Acknowledged || !s.h.Intents.PowerOff["b"].Acknowledged {
		t.Fatalf("holds not acknowledged once off: %+v", s.h.Intents.PowerOff)
	}
	// One requester withdraws: still held by the other.
	delete(s.h.Intents.PowerOff, "a")
	s.step(nil)
	s.expect(ActionNone, wire.StateProvisioned)
	// A reboot while held: done at once, the host stays off.
	s.intents().Reboot = intent(func(i *wire.Intent) { i.Mode = wire.RebootHard })
	s.step(nil)
	s.expect(ActionNone, wire.StateProvisioned)
	if s.h.Intents.Reboot != nil || s.d.Status.PoweredOn {
		t.Fatalf("want the reboot dropped, host kept off: %s", s.d)
	}
	// The last one withdraws: powered on.
	s.h.Intents.PowerOff = nil
	s.step(nil)
	s.expect(ActionPowerOn, wire.StateProvisioned)
}

func TestPowerOffHoldSoft(t *testing.T) {
	s := provisionedSim(t)
	s.intents().PowerOff = map[string]*wire.Intent{"x": intent(func(i *wire.Intent) { i.Mode = wire.RebootSoft; i.Requester = "x" })}
	s.step(nil)
	s.expect(ActionSoftPowerOff, wire.StateProvisioned)
}

func TestRebootWaitsWhileDetachedOrInMaintenance(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Detach = intent(nil)
	s.step(nil)
	s.settle()
	s.intents().Reboot = intent(func(i *wire.Intent) { i.Mode = wire.RebootHard })
	s.step(nil)
	s.expect(ActionNone, wire.StateProvisioned)
	if !s.d.Blocked || s.h.Intents.Reboot == nil {
		t.Fatalf("a detached host must not be touched: %s", s.d)
	}
}

func TestReinspect(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	s.expect(ActionNone, wire.StateAvailable)
	if s.d.Status.HardwareDetails == nil {
		s.h.Status.HardwareDetails = &wire.HardwareDetails{Model: "old"}
	}
	s.now = s.now.Add(time.Hour)
	s.intents().Inspect = intent(nil)
	s.step(nil)
	s.expect(ActionReinspect, wire.StateInspecting)
	start := s.d.Status.OperationHistory.Inspect.Start
	if !start.Equal(s.now) {
		t.Fatalf("inspect start %s, want %s", start, s.now)
	}
	s.now = s.now.Add(time.Minute)
	s.step(&Outcome{Action: ActionReinspect, HardwareDetails: &wire.HardwareDetails{Model: "new"}})
	s.expect(ActionProvide, wire.StateAvailable)
	if s.h.Intents.Inspect != nil || s.d.Status.HardwareDetails.Model != "new" {
		t.Fatalf("want new details and the intent dropped: %s %+v", s.d, s.d.Status.HardwareDetails)
	}
	if end := s.d.Status.OperationHistory.Inspect.End; !end.Equal(s.now) {
		t.Fatalf("inspect end %s, want %s", end, s.now)
	}
	s.settle()
	s.expect(ActionNone, wire.StateAvailable)
}

func TestInspectDroppedOutsideAvailable(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Inspect = intent(nil)
	s.step(nil)
	s.expect(ActionNone, wire.StateProvisioned)
	if s.h.Intents.Inspect != nil || !hasEvent(s.d, "InspectDropped") {
		t.Fatalf("want the inspect dropped with a warning: %s", s.d)
	}
}

// A soft power-off withdrawn while under way leaves no start behind that
// would cut a later soft reboot short.
func TestSoftRebootWithdrawnThenAgain(t *testing.T) {
	s := provisionedSim(t)
	s.intents().Reboot = intent(func(i *wire.Intent) { i.Mode = wire.RebootSoft })
	s.step(nil)
	s.expect(ActionSoftPowerOff, wire.StateProvisioned)
	s.step(&Outcome{Action: ActionSoftPowerOff, PoweredOn: boolp(true), InProgress: true})
	s.h.Intents.Reboot = nil // withdrawn; the OS never shut down
	s.now = s.now.Add(time.Hour)
	s.step(nil)
	s.intents().Reboot = intent(func(i *wire.Intent) { i.Mode = wire.RebootSoft })
	s.step(nil)
	s.expect(ActionSoftPowerOff, wire.StateProvisioned)
	s.step(&Outcome{Action: ActionSoftPowerOff, PoweredOn: boolp(true), InProgress: true})
	s.now = s.now.Add(DefaultPollInterval)
	s.step(nil)
	s.expect(ActionSoftPowerOff, wire.StateProvisioned) // a fresh timeout, not the stale one
}
