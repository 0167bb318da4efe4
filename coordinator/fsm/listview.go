package fsm

import (
	"sort"

	"github.com/rackfence/rackfence/shared/wire"
)

// HostsView is the host list (of one rack, or of every rack) as it was at
// one applied index: pointers to the immutable host records, sorted by
// name. Later entries store new records and leave the view's alone, so
// pages served from it long after are still the list at Index. It costs
// one pointer per host; nothing is copied.
type HostsView struct {
	Index uint64
	recs  []*hostRec
}

// HostsView captures the hosts of rack ("" = every rack) at the applied
// index.
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
	v := &HostsView{Index: f.applied.Load(), recs: make([]*hostRec, 0, len(src))}
	for _, h := range src {
		v.recs = append(v.recs, h)
	}
	sort.Slice(v.recs, func(i, j int) bool { return v.recs[i].Name < v.recs[j].Name })
	return v
}

// Len is how many hosts the view holds.
func (v *HostsView) Len() int { return len(v.recs) }

// At is the i-th host by name. It points into an immutable record: never
// modify what it reaches.
func (v *HostsView) At(i int) *wire.Host { return &v.recs[i].Host }

// After is the position of the first host named after name ("" = 0).
func (v *HostsView) After(name string) int {
	if name == "" {
		return 0
	}
	return sort.Search(len(v.recs), func(i int) bool { return v.recs[i].Name > name })
}
