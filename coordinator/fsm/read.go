package fsm

import (
	"sort"

	"github.com/rackfence/rackfence/shared/wire"
)

// Reads answer from this node's FSM as it is now. The store makes them
// linearizable (ReadBarrier) before calling them unless the caller asked
// for a stale read. Returned hosts share immutable records: do not modify
// what their pointers reach.

// ClusterID is the cluster's stable ID ("" before the first leader ran).
func (f *FSM) ClusterID() string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.s.ClusterID
}

// Generation is the cluster's restore generation (epoch.go).
func (f *FSM) Generation() uint64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.s.Generation
}

// MemberHTTP returns the HTTP URL recorded for a member.
func (f *FSM) MemberHTTP(id string) string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.s.Members[id]
}

// Host returns one host.
func (f *FSM) Host(name string) (wire.Host, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	h := f.s.Hosts[name]
	if h == nil {
		return wire.Host{}, false
	}
	return h.host(), true
}

// Events returns a host's events, newest last.
func (f *FSM) Events(name string) ([]wire.Event, uint64, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	h := f.s.Hosts[name]
	if h == nil {
		return nil, 0, false
	}
	return append([]wire.Event{}, eventsOf(h.Events)...), f.applied.Load(), true
}

// RackUsesCredentials reports whether a host of rack names the credentials
// (as its BMC's, or as the record of its userData, networkData, metaData
// or preprovisioningNetworkData).
func (f *FSM) RackUsesCredentials(rack, cred string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	r := f.s.Racks[rack]
	if r == nil {
		return false
	}
	for _, e := range r.Hosts {
		if h := e.host(); h.NamesRecord(cred) {
			return true
		}
	}
	return false
}

// Token looks a token up by its SHA-256 hex hash.
func (f *FSM) Token(hash string) (TokenInfo, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t, ok := f.s.Tokens[hash]
	return t, ok
}

// Lease returns a rack's current lease (nil when free).
func (f *FSM) Lease(rack string) *wire.Lease {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if r := f.s.Racks[rack]; r != nil {
		return r.Lease.wire(rack)
	}
	return nil
}

// Leases returns every held lease with the index that last set it
// (the store re-arms timers from it).
func (f *FSM) Leases() map[string]LeaseRec {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := map[string]LeaseRec{}
	for name, r := range f.s.Racks {
		if r.Lease != nil {
			out[name] = *r.Lease
		}
	}
	return out
}

// LeaseOf returns rack's lease record; false when the rack is free.
func (f *FSM) LeaseOf(rack string) (LeaseRec, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if r := f.s.Racks[rack]; r != nil && r.Lease != nil {
		return *r.Lease, true
	}
	return LeaseRec{}, false
}

// LeaseHistory returns a rack's lease records, newest last.
func (f *FSM) LeaseHistory(rack string) ([]wire.LeaseRecord, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := []wire.LeaseRecord{}
	if r := f.s.Racks[rack]; r != nil {
		out = append(out, r.History...)
	}
	return out, f.applied.Load()
}

// Racks lists every rack that has hosts or a lease, sorted by name.
func (f *FSM) Racks() ([]wire.Rack, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := []wire.Rack{}
	for name, r := range f.s.Racks {
		if len(r.Hosts) == 0 && r.Lease == nil {
			continue
		}
		e := wire.Rack{Name: name, Hosts: len(r.Hosts), Counts: r.counts()}
		if r.Lease != nil {
			e.Holder, e.Epoch, e.TTL = r.Lease.Holder, r.Lease.Epoch, wire.Duration(r.Lease.TTL)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, f.applied.Load()
}

// Sizes counts hosts, racks, and racks that hold a lease (the offline
// inspection of a data dir).
func (f *FSM) Sizes() (hosts, racks, leases int) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, r := range f.s.Racks {
		if r.Lease != nil {
			leases++
		}
	}
	return len(f.s.Hosts), len(f.s.Racks), leases
}
