package api

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestRoundAnswersConnectionsInTurn: a round's answer wakes the watchers
// of writeLanes connections first, not the whole round at once; the next
// connection's watchers get it when one of those connections' watchers
// have all written theirs, or the hub's turnHold after its turn began
// when they do not finish. Every watcher gets the same answer. (Joining
// once every turn is open: TestStreamedLineAllocatesNothing.)
//
// The order is checked with a hold of an hour, so no timer can open a
// turn while the test looks (on a loaded machine 10 ms pass between two
// reads of a channel); the hold's own timer with one of 5 ms and nobody
// finishing.
func TestRoundAnswersConnectionsInTurn(t *testing.T) {
	const conns, each = 5, 3
	t.Run("a finished connection opens the next", func(t *testing.T) {
		turns := crowdInTurns(t, time.Hour, conns, each)
		first := turns.take(t, writeLanes*each, 30*time.Second)
		if len(first) != writeLanes*each {
			t.Fatalf("%d watchers answered within 30 s, want the %d of the first %d connections", len(first), writeLanes*each, writeLanes)
		}
		for _, g := range first {
			if g.conn >= writeLanes {
				t.Fatalf("connection %d's watcher answered before connections 0–%d had written theirs", g.conn, writeLanes-1)
			}
		}
		// No more while those write: the whole round used to wake at once.
		if more := turns.take(t, 1, 200*time.Millisecond); len(more) != 0 {
			t.Fatalf("connection %d's watcher answered while the first %d connections were still writing", more[0].conn, writeLanes)
		}
		// Each connection that finishes opens the next one's turn, in the
		// order the connections joined.
		open := first
		for next := writeLanes; next < conns; next++ {
			done := open[0].conn
			for _, g := range open {
				if g.conn == done {
					finishTurn(g.turn)
				}
			}
			got := turns.take(t, each, 30*time.Second)
			if len(got) != each {
				t.Fatalf("after connection %d wrote, %d watchers answered within 30 s, want connection %d's %d", done, len(got), next, each)
			}
			for _, g := range got {
				if g.conn != next {
					t.Fatalf("after connection %d wrote, connection %d answered, want %d", done, g.conn, next)
				}
			}
			var rest []turnAnswer
			for _, g := range open {
				if g.conn != done {
					rest = append(rest, g)
				}
			}
			open = append(rest, got...)
		}
	})
	t.Run("a held turn opens the next after the hold", func(t *testing.T) {
		turns := crowdInTurns(t, 5*time.Millisecond, conns, each)
		// Nobody finishes: every turn still comes, the hold apart.
		if got := turns.take(t, conns*each, 30*time.Second); len(got) != conns*each {
			t.Fatalf("with turns not finished, %d of the %d watchers answered within 30 s", len(got), conns*each)
		}
	})
}

// turnAnswer is one watcher's answer in a crowd of crowdInTurns.
type turnAnswer struct {
	conn  int
	index uint64
	turn  *turnGroup
}

// turnCrowd is a round's watchers answered, in the order they were.
type turnCrowd struct {
	key      watchKey
	answered chan turnAnswer
}

// crowdInTurns opens a round of conns connections' watchers, each
// watchers of each connection, joined in connection order, on a hub that
// holds a turn at most hold, and sets the round's answer.
func crowdInTurns(t *testing.T, hold time.Duration, conns, each int) *turnCrowd {
	t.Helper()
	h := newWatchHub(prometheus.NewRegistry())
	h.turnHold = hold
	s := &Server{watches: h}
	fire := make(chan struct{})
	src := watchSource{
		wait: func(ctx context.Context, _ watchKey, _ <-chan time.Time) (bool, error) {
			select {
			case <-fire:
				return true, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		},
		answer: func(k watchKey) (any, error) { return wire.WatchResponse{Index: k.after + 1}, nil },
	}
	c := &turnCrowd{key: watchKey{rack: "r1", after: 5}, answered: make(chan turnAnswer, conns*each)}
	for conn := range conns {
		for i := range each {
			go func() {
				own := time.NewTimer(time.Hour)
				defer own.Stop()
				_, index, turn, err := s.awaitRound(context.Background(), fmt.Sprintf("10.0.0.%d:5000", conn), c.key, time.Hour, own, src)
				if err != nil {
					t.Error(err)
				}
				c.answered <- turnAnswer{conn, index, turn}
			}()
			// Connections join in order: 0's watchers first.
			waitMembers(t, h, c.key, conn*each+i+1)
		}
	}
	close(fire)
	return c
}

// take returns the next n answers, or those that came within.
func (c *turnCrowd) take(t *testing.T, n int, within time.Duration) []turnAnswer {
	t.Helper()
	var out []turnAnswer
	deadline := time.After(within)
	for len(out) < n {
		select {
		case g := <-c.answered:
			if g.index != c.key.after+1 {
				t.Fatalf("connection %d answered at %d, want %d", g.conn, g.index, c.key.after+1)
			}
			out = append(out, g)
		case <-deadline:
			return out
		}
	}
	return out
}

// waitMembers waits until key's round has n watchers.
func waitMembers(t *testing.T, h *watchHub, key watchKey, n int) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		h.mu.Lock()
		r := h.rounds[key]
		m := 0
		if r != nil {
			m = r.members
		}
		h.mu.Unlock()
		if m >= n {
			return
		}
	}
	t.Fatalf("key %+v's round never had %d watchers", key, n)
}
