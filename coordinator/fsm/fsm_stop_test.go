package fsm

import (
	"errors"
	"testing"
)

// TestUnknownEntryStopsTheFSM: a log entry whose command type or body
// version this binary does not know stops the FSM at that entry: nothing
// of it and nothing after it is applied, the applied index stays before
// it, no snapshot is taken past it, and the reason names the entry.
func TestUnknownEntryStopsTheFSM(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry func() []byte
		want  string
	}{
		{"unknown type", func() []byte { return []byte{200, 1, '{', '}'} },
			"log entry 2 has command type 200 that this binary does not know: upgrade this member"},
		{"newer body version", func() []byte { return []byte{byte(CmdPutHost), 9, '{', '}'} },
			"log entry 2 has command type 2 at body version 9, newer than this binary reads (4): upgrade this member"},
		{"unknown part of a batch", func() []byte {
			ok, _ := Encode(PutHostCmd{Host: host("h9", "r1")})
			return EncodeBatch([][]byte{ok, {201, 1, '{', '}'}})
		}, "log entry 2 has command type 201 that this binary does not know: upgrade this member"},
		{"newer batch framing", func() []byte { return []byte{byte(CmdBatch), 2, 0} },
			"log entry 2 has command type 15 at body version 2, newer than this binary reads (1): upgrade this member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFSMT(t)
			var stops []*StopReason
			h.f.onStop = func(r *StopReason) { stops = append(stops, r) }
			h.ok(PutHostCmd{Host: host("h1", "r1")})
			r := h.applyRaw(tc.entry())
			if !errors.Is(r.Err, ErrStopped) || r.Err.Error() != tc.want {
				t.Fatalf("entry 2: %v, want %q", r.Err, tc.want)
			}
			if h.f.AppliedIndex() != 1 {
				t.Fatalf("applied index %d after the stop, want 1 (the entry before)", h.f.AppliedIndex())
			}
			if _, ok := h.f.s.Hosts["h9"]; ok {
				t.Fatal("a part of the batch with an unknown part was applied")
			}
			// Entries after it are not applied either.
			b, _ := Encode(PutHostCmd{Host: host("h2", "r1")})
			if r := h.f.Apply(3, b).(Result); !errors.Is(r.Err, ErrStopped) {
				t.Fatalf("entry 3 after the stop: %v", r.Err)
			}
			if _, ok := h.f.s.Hosts["h2"]; ok || h.f.AppliedIndex() != 1 {
				t.Fatal("an entry after the stop was applied")
			}
			if _, err := h.f.Snapshot(); !errors.Is(err, ErrStopped) {
				t.Fatalf("snapshot of a stopped FSM: %v", err)
			}
			if len(stops) != 1 || h.f.Stopped().Index != 2 {
				t.Fatalf("onStop calls %d, stopped %+v", len(stops), h.f.Stopped())
			}
		})
	}
}

// TestCorruptKnownEntryIsAnErrorResult: an entry of a known type and
// version whose body does not decode fails alike on every member, so it
// stays an error result and the FSM goes on.
func TestCorruptKnownEntryIsAnErrorResult(t *testing.T) {
	h := newFSMT(t)
	r := h.applyRaw([]byte{byte(CmdDeleteHost), 1, '{'})
	if r.Err == nil || errors.Is(r.Err, ErrStopped) || h.f.Stopped() != nil {
		t.Fatalf("corrupt body: %v, stopped %v", r.Err, h.f.Stopped())
	}
	h.ok(PutHostCmd{Host: host("h1", "r1")})
}
