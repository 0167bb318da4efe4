package hoststate

import (
	"reflect"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestResumeInError(t *testing.T) {
	s := newSim(t, fullHost())
	s.ok()
	for i := 0; i < 5; i++ {
		s.now = s.now.Add(24 * 60 * 60 * 1e9)
		s.step(nil)
		s.fail(ErrClassFailed)
	}
	if s.d.Status.ErrorCount != 5 || s.d.Action != ActionNone {
		t.Fatalf("setup: %s", s.d)
	}
	res := intent(nil)
	s.intents().Resume = res
	d := Step(Input{Host: s.h, Now: s.now})
	if d.Status.ErrorCount != 1 || d.Action != ActionInspect || d.Status.ErrorType != wire.ErrInspection {
		t.Fatalf("resume must set errorCount 1 and retry now: %s", d)
	}
	if len(d.Acks) != 1 || d.Acks[0] != (wire.IntentAck{Kind: wire.IntentResume, CreatedIndex: res.CreatedIndex, Drop: true}) {
		t.Fatalf("want one dropping ack: %+v", d.Acks)
	}
	if !hasEvent(d, "Resumed") {
		t.Fatalf("no Resumed event: %v", d.Events)
	}
	// The coordinator has not dropped it yet; the retry fails again: the
	// resume is not applied a second time.
	h := s.h
	st := d.Status
	h.Status = &st
	d = Step(Input{Host: h, Now: s.now, Last: &Outcome{Action: ActionInspect, Err: ErrClassFailed}})
	if d.Status.ErrorCount != 2 || d.Action != ActionNone {
		t.Fatalf("want errorCount 2 and backoff: %s", d)
	}
	if len(d.Acks) != 1 || !d.Acks[0].Drop {
		t.Fatalf("want the resume dropped again: %+v", d.Acks)
	}
}

func TestResumeWithoutErrorChangesNothing(t *testing.T) {
	for _, name := range []string{"new", "available", "provisioning"} {
		t.Run(name, func(t *testing.T) {
			h := fullHost()
			if name != "new" {
				s := newSim(t, h)
				s.settle()
				if name == "provisioning" {
					s.edit(func(h *wire.Host) { h.Image = &wire.Image{URL: "http://i"} })
				}
				h = s.h
			}
			without := Step(Input{Host: h, Now: t0})
			it := intent(nil)
			h.Intents = &wire.Intents{Resume: it}
			with := Step(Input{Host: h, Now: t0})
			if !reflect.DeepEqual(with.Status, without.Status) || with.Action != without.Action || with.Remove != without.Remove {
				t.Fatalf("resume changed a host not in error:\nwith    %s\nwithout %s", with, without)
			}
			if len(with.Acks) != 1 || !with.Acks[0].Drop || with.Acks[0].CreatedIndex != it.CreatedIndex {
				t.Fatalf("want the resume dropped: %+v", with.Acks)
			}
			if !hasEvent(with, "ResumeIgnored") {
				t.Fatalf("no ResumeIgnored event: %v", with.Events)
			}
		})
	}
}
