package api

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/coordinator/fsm"
)

// Bounds of the host-list views kept for paged lists: a view is one
// pointer per host, so MaxListViews views of a 100,000-host tier hold at
// most 12.8 MB of pointers (records are shared with the live state).
const (
	// ListViewLinger is how long a view is kept after a last page was
	// served from it and none since: the records it points to, replaced
	// since, stay in memory as long as it does. Long enough for a client
	// to repeat a last page it did not receive; 10 s kept the views of
	// 5 clients listing every 2 s (16 views, and every record replaced in
	// those 10 s) alive for nothing.
	ListViewLinger = time.Second
	// ListViewMaxAge is how long a view is kept after it was taken,
	// however often its pages are read; a continue token into a view
	// gone is answered list_expired. A view holds the host records as
	// they were at its index, so every record replaced since stays in
	// memory as long as the view does: this bounds that to the records
	// replaced in ListViewMaxAge, whatever the clients do. A full list
	// of 100,000 hosts takes seconds; a reader slower than this goes on
	// in a newer view after the last host it read (after=), or starts
	// again.
	ListViewMaxAge = time.Minute
	// MaxListViews is how many views (one per index and rack) are kept;
	// the least recently used goes first.
	MaxListViews = 16
)

type viewKey struct {
	index uint64
	rack  string
}

// listViews keeps the host-list views of recent indexes, so every page of
// a paged list answers from its first page's index; clients listing at
// the same index share one view.
type listViews struct {
	hosts *viewCache[viewKey, *fsm.HostsView]
	// items: the other paged lists' first pages (list_paged.go).
	items *viewCache[itemKey, any]
	pages *prometheus.CounterVec
}

func newListViews(reg prometheus.Registerer) *listViews {
	l := &listViews{hosts: newViewCache[viewKey, *fsm.HostsView](), items: newViewCache[itemKey, any]()}
	l.pages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackfence_list_pages_total",
		Help: "Pages of paged lists (hosts, events, credentials, tokens, lease history) this member answered, by outcome: first (a new list), next (a continue token served from its index's view), expired (list_expired: the view was gone).",
	}, []string{"outcome"})
	for _, o := range []string{"first", "next", "expired"} {
		l.pages.WithLabelValues(o)
	}
	reg.MustRegister(l.pages)
	return l
}

// current returns the view of rack at f's applied index, shared with
// others listing at that index; keep records it for later pages.
func (l *listViews) current(f hostViews, rack string, keep bool) *fsm.HostsView {
	if !keep {
		return f.HostsView(rack)
	}
	k := viewKey{f.AppliedIndex(), rack}
	if v, ok := l.hosts.get(k); ok {
		// A new list at the view's index: nothing was replaced since,
		// so it is taken again now (ListViewMaxAge counts from here).
		l.hosts.put(k, v)
		return v
	}
	v := f.HostsView(rack)
	l.hosts.put(viewKey{v.Index, rack}, v)
	return v
}

// at returns the view of rack at index for a continue token: the kept
// one, or a new one when the applied index is still index (a member that
// did not serve the first page but has applied nothing since). Nil: gone.
func (l *listViews) at(f hostViews, rack string, index uint64) *fsm.HostsView {
	k := viewKey{index, rack}
	if v, ok := l.hosts.get(k); ok {
		return v
	}
	if f.AppliedIndex() == index {
		if v := f.HostsView(rack); v.Index == index {
			l.hosts.put(k, v)
			return v
		}
	}
	return nil
}
