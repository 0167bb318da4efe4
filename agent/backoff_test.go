package agent

import (
	"testing"
	"time"
)

// The one backoff: attempt n waits a random duration in [d/2, d], d
// doubling from min and held at max; reset starts over; the waits are
// jittered (agents that failed together do not retry together).
func TestBackoff(t *testing.T) {
	b := newBackoff(100*time.Millisecond, time.Second)
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, ms := range want {
		d := ms * time.Millisecond
		if got := b.next(); got < d/2 || got > d {
			t.Errorf("attempt %d: wait %s, want within [%s, %s]", i+1, got, d/2, d)
		}
	}
	b.reset()
	if got := b.next(); got > 100*time.Millisecond {
		t.Errorf("after reset: wait %s, want at most 100ms", got)
	}
	seen := map[time.Duration]bool{}
	for range 20 {
		seen[statusWriteBackoff.delay(3)] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 waits of attempt 3 were all %v: not jittered", seen)
	}
	for d := range seen {
		if d < 400*time.Millisecond || d > 800*time.Millisecond {
			t.Errorf("status write attempt 3: wait %s, want within [400ms, 800ms]", d)
		}
	}
	if got := statusWriteBackoff.delay(100); got > 5*time.Second || got < 2500*time.Millisecond {
		t.Errorf("status write attempt 100: wait %s, want within [2.5s, 5s]", got)
	}
}
