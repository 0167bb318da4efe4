package api

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/shared/wire"
)

// changedSource is a watch source whose change has already happened: a
// round waits only for what the hub makes it wait for.
var changedSource = watchSource{
	wait:   func(context.Context, watchKey, <-chan time.Time) (bool, error) { return true, nil },
	answer: func(k watchKey) (any, error) { return wire.WatchResponse{Index: k.after + 1}, nil },
}

// TestWatchRoundAwaitsSweep: a woken round of a crowd large enough to
// linger answers only once the crowd's watchers still writing its last
// answer are done, so each watcher takes one line per sweep; and a
// watcher that never finishes writing holds its crowd back no longer than
// sweepWait.
func TestWatchRoundAwaitsSweep(t *testing.T) {
	h := newWatchHub(prometheus.NewRegistry())
	key := watchKey{rack: "r1", after: 5}
	for i := 0; i < lingerFrom; i++ {
		h.stream(key, 1)
	}
	h.writing(key, 1) // a watcher writing the crowd's last answer
	r := h.join(key, time.Minute, changedSource)
	// Without the wait the round answers after its linger (1.6 ms for
	// this crowd): well within 200 ms.
	select {
	case <-r.done:
		t.Fatal("the round answered while a watcher of its crowd was still writing the last answer")
	case <-time.After(200 * time.Millisecond):
	}
	h.writing(key, -1)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the round did not answer within 30 s of its crowd's last writer finishing")
	}
	if r.err != nil || r.index != key.after+1 {
		t.Fatalf("answer: index %d, err %v", r.index, r.err)
	}
	h.leave(key, r)

	// A writer that never finishes: the next round still answers.
	key.after = r.index
	h.writing(key, 1)
	r = h.join(key, time.Minute, changedSource)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("a writer that never finished held its crowd's round over 30 s (sweepWait is %s)", sweepWait)
	}
	h.leave(key, r)
}
