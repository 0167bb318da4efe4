package fsm

import (
	"slices"
	"sort"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// HostsView is the host list (of one rack, or of every rack) as it was at
// one applied index: pointers to the immutable host records, sorted by
// name. Later entries store new records and leave the view's alone, so
// pages served from it long after are still the list at Index. It costs
// one pointer per host; nothing is copied.
type HostsView struct {
	Index uint64
	recs  []*hostEntry
}

// HostsView captures the hosts of rack ("" = every rack) at the applied
// index. The order of the last view of the same rack is reused when its
// hosts are still the same names (the usual case: statuses change, the
// set of hosts rarely does), which costs one map lookup per host instead
// of a sort.
func (f *FSM) HostsView(rack string) *HostsView {
	f.mu.RLock()
	defer f.mu.RUnlock()
	src := f.s.Hosts
	if rack != "" {
		src = nil
		if r := f.s.Racks[rack]; r != nil {
			src = r.Hosts
		}
	}
	v := &HostsView{Index: f.applied.Load()}
	slot := &f.allOrder
	if rack != "" {
		slot = &f.rackOrder
	}
	if o := slot.Load(); o != nil && o.rack == rack {
		v.recs = o.lookup(src)
	}
	if v.recs == nil {
		v.recs = make([]*hostEntry, 0, len(src))
		for _, h := range src {
			v.recs = append(v.recs, h)
		}
		slices.SortFunc(v.recs, func(a, b *hostEntry) int { return strings.Compare(a.Name, b.Name) })
		slot.Store(newHostOrder(rack, v.recs))
	}
	return v
}

// hostOrder is the names of a view's hosts, sorted: the next view of the
// same rack looks its records up in this order when it has the same
// names. Names only, so it keeps no record alive.
type hostOrder struct {
	rack  string
	names []string
}

func newHostOrder(rack string, recs []*hostEntry) *hostOrder {
	o := &hostOrder{rack: rack, names: make([]string, len(recs))}
	for i, h := range recs {
		o.names[i] = h.Name
	}
	return o
}

// lookup returns src's records in o's order, or nil when src does not
// hold exactly o's names (a host was added or removed since): as many
// records as names, and every name found, is the same set.
func (o *hostOrder) lookup(src map[string]*hostEntry) []*hostEntry {
	if len(src) != len(o.names) {
		return nil
	}
	recs := make([]*hostEntry, len(o.names))
	for i, n := range o.names {
		h := src[n]
		if h == nil {
			return nil
		}
		recs[i] = h
	}
	return recs
}

// Len is how many hosts the view holds.
func (v *HostsView) Len() int { return len(v.recs) }

// At is the i-th host by name. Its pointers reach an immutable entry's
// parts: never modify what they reach.
func (v *HostsView) At(i int) wire.Host { return v.recs[i].host() }

// After is the position of the first host named after name ("" = 0).
func (v *HostsView) After(name string) int {
	if name == "" {
		return 0
	}
	return sort.Search(len(v.recs), func(i int) bool { return v.recs[i].Name > name })
}
