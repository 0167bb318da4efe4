package agent

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestCoalescePause: the watch pauses only after a busy answer (four
// changes or more), never after a lone intent or acknowledgement, and not
// at all when coalescing is off.
func TestCoalescePause(t *testing.T) {
	for _, c := range []struct {
		name    string
		d       time.Duration
		changes int
		want    time.Duration
	}{
		{"empty answer (timeout)", 25 * time.Millisecond, 0, 0},
		{"one host (an intent)", 25 * time.Millisecond, 1, 0},
		{"three changes", 25 * time.Millisecond, 3, 0},
		{"four changes (registering)", 25 * time.Millisecond, 4, 25 * time.Millisecond},
		{"busy but off", -1, 100, 0},
	} {
		if got := coalescePause(c.d, c.changes); got != c.want {
			t.Errorf("%s: pause %s, want %s", c.name, got, c.want)
		}
	}
}

// TestApplyCountsChanges: an answer's changes are the hosts deleted, those
// whose input changed, and those that came with a status; a host of a
// status-less answer whose input did not change (its status alone moved,
// riding along with an intent) is not one, so the intent is followed at
// once.
func TestApplyCountsChanges(t *testing.T) {
	s := newCountSession(t)
	base := make([]wire.Host, 5)
	for i := range base {
		base[i] = wire.Host{Name: string(rune('a' + i)), Rack: "r1", Status: &wire.HostStatus{}}
	}
	if n := s.apply(&wire.WatchResponse{Hosts: base}); n != 5 {
		t.Fatalf("first answer (new hosts): %d changes, want 5", n)
	}
	ride := make([]wire.Host, 5)
	for i := range ride {
		ride[i] = wire.Host{Name: base[i].Name, Rack: "r1", ModifiedIndex: 9}
	}
	ride[0].Intents = &wire.Intents{Detach: &wire.Intent{CreatedIndex: 9}}
	if n := s.apply(&wire.WatchResponse{Hosts: ride, StatusOmitted: []string{"a", "b", "c", "d", "e"}}); n != 1 {
		t.Fatalf("an intent among status-only changes: %d changes, want 1", n)
	}
	if n := s.apply(&wire.WatchResponse{Hosts: base[1:], Deleted: []string{"a"}}); n != 5 {
		t.Fatalf("hosts with statuses and a deletion: %d changes, want 5", n)
	}
}

// newCountSession is a session of rack r1 with only what apply uses.
func newCountSession(t *testing.T) *session {
	t.Helper()
	return &session{a: &Agent{cfg: Config{Rack: "r1"}}, store: newStore(), queue: newQueue()}
}
