package hoststate

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fullHost is a host with complete BMC details.
func fullHost() wire.Host {
	return wire.Host{
		Name: "r1-h01", Rack: "r1",
		BMC:    wire.BMC{Address: "redfish://10.0.0.1/redfish/v1/Systems/1", Credentials: "r1-bmc"},
		Online: true, SpecIndex: 1,
	}
}

// sim drives one host through Step the way the agent does: report the
// status, run the action, feed its outcome back.
type sim struct {
	t   *testing.T
	h   wire.Host
	now time.Time
	d   Decision
	// removed is set once a decision said Remove.
	removed bool
}

func newSim(t *testing.T, h wire.Host) *sim {
	t.Helper()
	s := &sim{t: t, h: h, now: t0}
	s.step(nil)
	return s
}

// step runs Step with last and applies the decision to the host like the
// coordinator would (status, acks).
func (s *sim) step(last *Outcome) Decision {
	s.t.Helper()
	s.d = Step(Input{Host: s.h, Now: s.now, Jitter: 0.5, Last: last})
	s.apply(s.d)
	return s.d
}

func (s *sim) apply(d Decision) {
	st := d.Status
	s.h.Status = &st
	for _, a := range d.Acks {
		if s.h.Intents == nil {
			continue
		}
		var p **wire.Intent
		switch a.Kind {
		case wire.IntentDetach:
			p = &s.h.Intents.Detach
		case wire.IntentDrain:
			p = &s.h.Intents.Drain
		case wire.IntentResume:
			p = &s.h.Intents.Resume
		case wire.IntentReboot:
			p = &s.h.Intents.Reboot
		case wire.IntentInspect:
			p = &s.h.Intents.Inspect
		case wire.IntentService:
			p = &s.h.Intents.Service
		case wire.IntentPowerOff:
			for k, it := range s.h.Intents.PowerOff {
				if it.CreatedIndex == a.CreatedIndex {
					cp := *it
					cp.Acknowledged = true
					s.h.Intents.PowerOff[k] = &cp
				}
			}
			continue
		}
		if *p == nil || (*p).CreatedIndex != a.CreatedIndex {
			continue
		}
		if a.Drop {
			*p = nil
		} else {
			cp := **p
			cp.Acknowledged = true
			*p = &cp
		}
	}
	if d.Remove {
		s.removed = true
	}
}

// ok runs the pending action successfully.
func (s *sim) ok() Decision {
	s.t.Helper()
	if s.d.Action == ActionNone {
		s.t.Fatalf("no action pending: %s", s.d)
	}
	return s.step(&Outcome{Action: s.d.Action})
}

// fail runs the pending action with an error class.
func (s *sim) fail(c ErrClass) Decision {
	s.t.Helper()
	if s.d.Action == ActionNone {
		s.t.Fatalf("no action pending: %s", s.d)
	}
	return s.step(&Outcome{Action: s.d.Action, Err: c, Message: "boom"})
}

// expect checks the pending action and state.
func (s *sim) expect(action Action, state string) {
	s.t.Helper()
	if s.d.Action != action || s.d.Status.ProvisioningState != state {
		s.t.Fatalf("want action %q in %q, got %s", action, state, s.d)
	}
}

// run completes actions successfully until none is left (at most n).
func (s *sim) settle() {
	s.t.Helper()
	for i := 0; s.d.Action != ActionNone; i++ {
		if i > 50 {
			s.t.Fatalf("does not settle: %s", s.d)
		}
		s.ok()
	}
}

// edit changes the spec (SpecIndex++) and steps.
func (s *sim) edit(f func(h *wire.Host)) Decision {
	s.t.Helper()
	f(&s.h)
	s.h.SpecIndex++
	return s.step(nil)
}

func (s *sim) intents() *wire.Intents {
	if s.h.Intents == nil {
		s.h.Intents = &wire.Intents{}
	}
	return s.h.Intents
}

var nextIndex uint64 = 100

func intent(mod func(*wire.Intent)) *wire.Intent {
	nextIndex++
	it := &wire.Intent{CreatedIndex: nextIndex, Actor: "test"}
	if mod != nil {
		mod(it)
	}
	return it
}

func hasEvent(d Decision, reason string) bool {
	for _, e := range d.Events {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

func boolp(b bool) *bool { return &b }
