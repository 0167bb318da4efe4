package api

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/coordinator/fsm"
)

// TestListViewsBounded: at most MaxListViews views are kept, the least
// recently used going first; a view whose index is still the applied one
// is rebuilt rather than answered gone.
func TestListViewsBounded(t *testing.T) {
	f := fsm.NewFSM()
	l := newListViews(prometheus.NewRegistry())
	for i := uint64(1); i <= MaxListViews+1; i++ {
		f.MarkApplied(i)
		if v := l.current(f, "", true); v.Index != i {
			t.Fatalf("view at %d, applied %d", v.Index, i)
		}
		if i == 1 {
			continue
		}
		l.at(f, "", 1) // keeps the first one in use
	}
	if len(l.hosts.m) != MaxListViews {
		t.Fatalf("%d views kept, want %d", len(l.hosts.m), MaxListViews)
	}
	if l.at(f, "", 1) == nil {
		t.Fatal("the view in use was evicted")
	}
	if l.at(f, "", 2) != nil {
		t.Fatal("the least recently used view is still kept")
	}
	if v := l.at(f, "", MaxListViews+1); v == nil {
		t.Fatal("the view at the applied index is gone")
	}
}

// TestListViewsReleased: a view a list was read to the end of goes
// ListViewLinger after its last page, and without any further list: the
// host records it holds (replaced since its index) are not kept by a
// view nobody reads.
func TestListViewsReleased(t *testing.T) {
	f := fsm.NewFSM()
	l := newListViews(prometheus.NewRegistry())
	var skew atomic.Int64
	l.hosts.mu.Lock()
	l.hosts.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	l.hosts.sweepEvery = 10 * time.Millisecond
	l.hosts.mu.Unlock()
	f.MarkApplied(1)
	v := l.current(f, "", true)
	l.hosts.finished(viewKey{v.Index, ""})
	skew.Store(int64(2 * time.Second))
	deadline := time.Now().Add(5 * time.Second) // the sweep runs every 10 ms; a 10 s linger would show at 8 s
	for {
		l.hosts.mu.Lock()
		n := len(l.hosts.m)
		l.hosts.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a finished list's view is still kept 2 s after its last page with no list asked (%d views kept)", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
