package api

import (
	"testing"

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
