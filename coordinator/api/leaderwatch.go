package api

import (
	"sync"
	"time"
)

// leaderWatch tells the forwards in flight when the leader they were sent
// to is no longer the one this member follows: it stepped down, or this
// member stopped hearing from it and an election began. One goroutine
// polls the store every interval while any forward waits, and none runs
// otherwise.
type leaderWatch struct {
	leader   func() string // the leader's API URL as this member sees it ("" when none)
	interval time.Duration

	mu      sync.Mutex
	next    uint64
	waiters map[uint64]leaderWaiter
}

type leaderWaiter struct {
	url   string
	moved func()
}

func newLeaderWatch(leader func() string, interval time.Duration) *leaderWatch {
	return &leaderWatch{leader: leader, interval: interval, waiters: map[uint64]leaderWaiter{}}
}

// watch calls moved (once, from the watch's goroutine) when url stops
// being the leader; the returned stop ends the watch.
func (w *leaderWatch) watch(url string, moved func()) (stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.next
	w.next++
	w.waiters[id] = leaderWaiter{url: url, moved: moved}
	if len(w.waiters) == 1 {
		go w.poll()
	}
	return func() {
		w.mu.Lock()
		delete(w.waiters, id)
		w.mu.Unlock()
	}
}

// poll runs while waiters remain.
func (w *leaderWatch) poll() {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for range t.C {
		cur := w.leader()
		var fire []func()
		w.mu.Lock()
		for id, wt := range w.waiters {
			if wt.url != cur {
				fire = append(fire, wt.moved)
				delete(w.waiters, id)
			}
		}
		empty := len(w.waiters) == 0
		w.mu.Unlock()
		for _, f := range fire {
			f()
		}
		if empty {
			return
		}
	}
}
