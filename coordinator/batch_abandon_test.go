package coordinator

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// appliedFuture is a committed entry's future.
type appliedFuture struct{ resp any }

func (f appliedFuture) Error() error  { return nil }
func (f appliedFuture) Index() uint64 { return 1 }
func (f appliedFuture) Response() any { return f.resp }

// heldBatcher is a batcher whose Raft has no room for another batch
// (both in-flight slots taken, as while a leader is starved) and which
// records the entries it hands to Raft; free makes room.
func heldBatcher(t *testing.T, timeout time.Duration) (b *batcher, m *Metrics, entries func() [][]byte, free func()) {
	m = NewMetrics()
	b = newBatcher(nil, 64, timeout, m, nil)
	var mu sync.Mutex
	var got [][]byte
	b.apply = func(cmd []byte, _ time.Duration) raft.ApplyFuture {
		mu.Lock()
		got = append(got, bytes.Clone(cmd))
		mu.Unlock()
		return appliedFuture{resp: fsm.Result{Value: true}}
	}
	b.inflight <- struct{}{}
	b.inflight <- struct{}{}
	t.Cleanup(func() { close(b.stop) })
	entries = func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), got...)
	}
	free = func() { <-b.inflight; <-b.inflight }
	return b, m, entries, free
}

func queue(b *batcher, ctx context.Context, key, data string, queued time.Time) *pending {
	p := &pending{key: key, data: []byte(data), done: make(chan fsm.Result, 1), ctx: ctx, queued: queued}
	b.active.Add(1)
	b.in <- p
	return p
}

// TestBatcherDropsAbandonedWrites: a queued write whose caller stopped
// waiting before the batcher took it never reaches the Raft log (it
// would only add to a backlog while the caller's retry queues behind
// it); a write whose caller still waits goes through.
func TestBatcherDropsAbandonedWrites(t *testing.T) {
	b, m, entries, free := heldBatcher(t, time.Minute)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	queue(b, gone, "h/a", "abandoned", time.Now())
	live := queue(b, context.Background(), "h/b", "waited-for", time.Now())
	free()
	select {
	case r := <-live.done:
		if r.Err != nil || r.Value != true {
			t.Fatalf("the waited-for write's result = %+v, want its value true", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waited-for write got no result within 30s")
	}
	got := entries()
	if len(got) != 1 || string(got[0]) != "waited-for" {
		t.Fatalf("entries handed to Raft = %q, want only the waited-for write", got)
	}
	if n := testutil.ToFloat64(m.abandoned); n != 1 {
		t.Errorf("rackfence_writes_abandoned_total = %v, want 1", n)
	}
	deadline := time.Now().Add(30 * time.Second)
	for b.active.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := b.active.Load(); n != 0 {
		t.Errorf("active = %d after every write ended, want 0 (a dropped write must leave the count)", n)
	}
}

// TestBatcherOverdueWhenQueueOlderThanTimeout: while the write the
// batcher holds has queued longer than the apply timeout and more wait
// behind it, the queue is overdue (the store sheds new writes with
// ErrBusy); once Raft takes them and the queue empties, it is not.
func TestBatcherOverdueWhenQueueOlderThanTimeout(t *testing.T) {
	b, _, _, free := heldBatcher(t, 50*time.Millisecond)
	if b.overdue() {
		t.Fatal("an empty queue is overdue")
	}
	first := queue(b, context.Background(), "h/a", "a", time.Now().Add(-time.Second))
	queue(b, context.Background(), "h/b", "b", time.Now())
	deadline := time.Now().Add(30 * time.Second)
	for !b.overdue() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !b.overdue() {
		t.Fatal("a queue behind a write held for 1s (apply timeout 50ms) is not overdue")
	}
	free()
	<-first.done
	deadline = time.Now().Add(30 * time.Second)
	for (len(b.in) > 0 || b.active.Load() != 0) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if b.overdue() {
		t.Fatal("the queue stays overdue once it is empty")
	}
}
