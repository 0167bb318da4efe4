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
// have all written theirs, or turnHold after its turn began when they do
// not finish.
// Every watcher gets the same answer. (Joining once every turn is open:
// TestStreamedLineAllocatesNothing.)
func TestRoundAnswersConnectionsInTurn(t *testing.T) {
	h := newWatchHub(prometheus.NewRegistry())
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
	key := watchKey{rack: "r1", after: 5}
	const conns, each = 5, 3
	type got struct {
		conn  int
		index uint64
		turn  *turnGroup
	}
	answered := make(chan got, conns*each)
	for c := range conns {
		for i := range each {
			go func() {
				own := time.NewTimer(time.Hour)
				defer own.Stop()
				_, index, turn, err := s.awaitRound(context.Background(), fmt.Sprintf("10.0.0.%d:5000", c), key, time.Hour, own, src)
				if err != nil {
					t.Error(err)
				}
				answered <- got{c, index, turn}
			}()
			// Connections join in order: 0's watchers first.
			waitMembers(t, h, key, c*each+i+1)
		}
	}
	close(fire)
	take := func(n int, within time.Duration) []got {
		var out []got
		deadline := time.After(within)
		for len(out) < n {
			select {
			case g := <-answered:
				if g.index != key.after+1 {
					t.Fatalf("connection %d answered at %d, want %d", g.conn, g.index, key.after+1)
				}
				out = append(out, g)
			case <-deadline:
				return out
			}
		}
		return out
	}
	first := take(writeLanes*each, 30*time.Second)
	if len(first) != writeLanes*each {
		t.Fatalf("%d watchers answered within 30 s, want the %d of the first %d connections", len(first), writeLanes*each, writeLanes)
	}
	for _, g := range first {
		if g.conn >= writeLanes {
			t.Fatalf("connection %d's watcher answered before connections 0–%d had written theirs", g.conn, writeLanes-1)
		}
	}
	// No more while those write (for less than turnHold, after which the
	// next turn would come anyway): the whole round used to wake at once.
	if more := take(1, turnHold/2); len(more) != 0 {
		t.Fatalf("connection %d's watcher answered while the first %d connections were still writing", more[0].conn, writeLanes)
	}
	// Connection 0's watchers finish: connection 2's turn.
	for _, g := range first {
		if g.conn == 0 {
			finishTurn(g.turn)
		}
	}
	next := take(each, 30*time.Second)
	for _, g := range next {
		if g.conn != writeLanes {
			t.Fatalf("after connection 0 wrote, connection %d answered, want %d", g.conn, writeLanes)
		}
	}
	// Nobody finishes any more: the remaining turns come turnHold apart.
	rest := take((conns-writeLanes-1)*each, 30*time.Second)
	if len(rest) != (conns-writeLanes-1)*each {
		t.Fatalf("with turns not finished, %d of the last %d watchers answered within 30 s", len(rest), (conns-writeLanes-1)*each)
	}
	// (A watcher joining once every turn is open takes the answer at once,
	// with no turn: TestStreamedLineAllocatesNothing.)
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
