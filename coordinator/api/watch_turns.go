package api

import (
	"sync"
	"time"
)

// Turns by connection. A round's answer used to wake every watcher of it
// at once (one closed channel): with 2,000 streamed watchers, 2,000
// handlers became runnable together, each ran to its connection's write
// lane and most parked again there. A write arriving meanwhile waited in
// the Go scheduler's run queues behind them: an execution trace of the
// member during the writes put its handler's runnable waits at up to
// 15 ms and the watchers' at about 100 runnable on average, the p99 of
// writes with 2,000 watchers at 5–7 times that without.
//
// Now a round's watchers wait by connection (turnGroup). Once the answer
// is set, the round opens the groups in the order their connections
// joined, at most writeLanes at a time: the next one opens when an open
// one's watchers have all written (or left), or turnHold after it opened,
// whichever comes first (a group that reads slowly goes on writing
// outside the window, bounded by its lane and Config.WatchWriteTimeout).
// So a change makes runnable about the watchers of writeLanes connections
// at a time, which are those the lanes let write anyway. Every watcher
// still gets the same answer; later groups get it a few milliseconds
// later. Once every group is open, watchers that join take the answer at
// once (a crowd's kept rounds: no allocation per line).

// turnHold is how long a group's turn holds the window before the next
// group opens anyway.
const turnHold = 10 * time.Millisecond

// openGate is a gate already open: for watchers that join a round whose
// groups are all open.
var openGate = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// roundTurns is a round's watchers by connection and the state of their
// turns.
type roundTurns struct {
	mu       sync.Mutex
	byConn   map[string]*turnGroup
	order    []*turnGroup  // in the order their connections joined
	released bool          // every group open: joiners go at once
	freed    chan struct{} // a group finished (buffered: writeLanes)
}

// turnGroup is the watchers of one connection in one round.
type turnGroup struct {
	r       *roundTurns
	gate    chan struct{} // closed when the group's turn comes
	pending int           // watchers counted in and not yet finished
	open    bool          // gate closed
	over    bool          // finished: no longer counts watchers
}

// enterTurn counts a watcher of conn into r's turns and returns the gate
// to wait for, and the group to pass to finishTurn once its answer is
// written (nil: nothing to pass, the watcher goes at once).
func (t *roundTurns) enterTurn(conn string) (<-chan struct{}, *turnGroup) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return openGate, nil
	}
	g := t.byConn[conn]
	if g == nil {
		if t.byConn == nil {
			t.byConn = map[string]*turnGroup{}
			t.freed = make(chan struct{}, writeLanes)
		}
		g = &turnGroup{r: t, gate: make(chan struct{})}
		t.byConn[conn] = g
		t.order = append(t.order, g)
	}
	if g.over {
		return g.gate, nil
	}
	g.pending++
	return g.gate, g
}

// finishTurn notes a watcher of g done: its answer written, or it left
// without one. The last of an open group frees its place in the window.
func finishTurn(g *turnGroup) {
	if g == nil {
		return
	}
	t := g.r
	t.mu.Lock()
	defer t.mu.Unlock()
	if g.pending--; g.pending > 0 || g.over {
		return
	}
	if g.open {
		g.over = true
		select {
		case t.freed <- struct{}{}:
		default:
		}
	}
}

// release opens r's groups in turn (the answer is set before it is
// called), each holding its turn at most hold, and returns once every
// group is open.
func (t *roundTurns) release(hold time.Duration) {
	var timer *time.Timer
	inflight, next := 0, 0
	for {
		t.mu.Lock()
		for inflight < writeLanes && next < len(t.order) {
			g := t.order[next]
			next++
			g.open = true
			close(g.gate)
			if g.pending > 0 {
				inflight++
			} else {
				g.over = true
			}
		}
		if next == len(t.order) {
			t.released = true
			t.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return
		}
		t.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(hold)
		} else {
			timer.Reset(hold)
		}
		select {
		case <-t.freed:
		case <-timer.C:
			// The oldest open group goes on outside the window.
		}
		inflight--
	}
}
