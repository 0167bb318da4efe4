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
	hosts := func(n int) []wire.Host { return make([]wire.Host, n) }
	for _, c := range []struct {
		name string
		d    time.Duration
		resp wire.WatchResponse
		want time.Duration
	}{
		{"empty answer (timeout)", 25 * time.Millisecond, wire.WatchResponse{}, 0},
		{"one host (an intent)", 25 * time.Millisecond, wire.WatchResponse{Hosts: hosts(1)}, 0},
		{"three changes", 25 * time.Millisecond, wire.WatchResponse{Hosts: hosts(2), Deleted: []string{"x"}}, 0},
		{"four hosts (registering)", 25 * time.Millisecond, wire.WatchResponse{Hosts: hosts(4)}, 25 * time.Millisecond},
		{"three hosts, one deleted", 25 * time.Millisecond, wire.WatchResponse{Hosts: hosts(3), Deleted: []string{"x"}}, 25 * time.Millisecond},
		{"busy but off", -1, wire.WatchResponse{Hosts: hosts(100)}, 0},
	} {
		if got := coalescePause(c.d, &c.resp); got != c.want {
			t.Errorf("%s: pause %s, want %s", c.name, got, c.want)
		}
	}
}
