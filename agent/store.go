package agent

import (
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/shared/wire"
)

// store holds what one session knows about its rack's hosts. It lives only
// as long as the lease it was built under: losing the lease drops it whole.
type store struct {
	mu    sync.Mutex
	hosts map[string]*hostEntry
}

// hostEntry is one host. Within a session the agent is the only writer of
// the host's status, so its own status (decided by the state machine) is
// authoritative; the coordinator's copy is taken once, when the session
// first sees the host.
type hostEntry struct {
	// host is the latest spec, intents and flags from the coordinator.
	host wire.Host
	// status is the status the state machine last decided (nil: new host).
	status *wire.HostStatus
	// written is the status last written to the coordinator in this
	// session (nil: none yet); refreshAt is when it is due to be written
	// again even if unchanged.
	written   *wire.HostStatus
	refreshAt time.Time
	// base is the host's modifiedIndex from the answer to the last full
	// write of written (0: unknown, or written per host): the reporter
	// refreshes the status with a touch naming it while it is set;
	// touching is set while a touch or the reporter's own write is queued.
	base     uint64
	touching bool
	// adopted: written and base are the coordinator's copy as the
	// session's watch first delivered it (store.upsert), not a write of
	// this session. While the state machine leaves the status as it is,
	// the session's first report of the host is a touch naming that base,
	// which stamps it with this epoch (session.report); the reporter's
	// periodic touches leave such a host alone.
	adopted bool
	// last is the outcome of the action run since the last Step.
	last *hoststate.Outcome
	// pending holds acks, events and removal not yet written (the write
	// failed); they go out with the next write.
	pendingAcks   []wire.IntentAck
	pendingEvents []wire.Event
	pendingRemove bool
	// writeFailures counts consecutive failed status writes (for backoff).
	writeFailures int
	// changedAt is when the watch last delivered a change the state
	// machine reads (for the intent-ack latency metric).
	changedAt time.Time
	// healthAt is when the host's hardware health is next read (zero:
	// not scheduled in this session); maxTemp its hottest temperature
	// reading at the last read (hasTemp: it had one). health.go.
	healthAt time.Time
	maxTemp  float64
	hasTemp  bool
}

func newStore() *store { return &store{hosts: map[string]*hostEntry{}} }

// upsert records h as seen by the watch. It reports whether the change
// matters to the state machine (a new host, or a change of spec, intents,
// deletion or handoff); a change of the status alone (our own writes
// coming back) does not. A host deleted and created again under the same
// name (recreated) is a new host: its entry is replaced by a fresh one,
// as if the deletion and the creation had come in two answers.
func (s *store) upsert(h wire.Host) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.hosts[h.Name]
	if !ok || recreated(e.host, h) {
		e = &hostEntry{host: h, changedAt: time.Now()}
		if h.Status != nil {
			st := *h.Status
			e.status = &st
			if h.ModifiedIndex != 0 {
				// A takeover confirms an unchanged status with a touch
				// rather than writing it again (hostEntry.adopted).
				w := *h.Status
				e.written, e.base, e.adopted = &w, h.ModifiedIndex, true
			}
		}
		s.hosts[h.Name] = e
		return true
	}
	changed := !sameInput(e.host, h)
	e.host = h
	if changed {
		e.changedAt = time.Now()
	}
	return changed
}

// recreated reports whether b is another host than a under the same name:
// the coordinator gives every host record its createdIndex when it is
// created and keeps it for the record's life, so a host deleted and
// created again has a new one. Caveat: 0 (not known) matches anything.
func recreated(a, b wire.Host) bool {
	return a.CreatedIndex != 0 && b.CreatedIndex != 0 && a.CreatedIndex != b.CreatedIndex
}

// sameInput compares what the state machine reads from the coordinator's
// copy, ignoring status, bookkeeping indexes and labels (the operator's
// tags: relabelling must not cut a host's retry wait short).
func sameInput(a, b wire.Host) bool {
	a.Status, b.Status = nil, nil
	a.ModifiedIndex, b.ModifiedIndex = 0, 0
	a.Labels, b.Labels = nil, nil
	return reflect.DeepEqual(a, b)
}

// firstNew returns the first host of a status-less answer whose status
// resp left out and that is new to the store: unknown, or known as
// another host of the same name (recreated). "" when there is none.
// StatusOmitted is in Hosts' order (wire.WatchResponse), so one pass
// pairs them.
func (s *store) firstNew(resp *wire.WatchResponse) string {
	omitted := resp.StatusOmitted
	if len(omitted) == 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for _, h := range resp.Hosts {
		if i == len(omitted) {
			break
		}
		if h.Name != omitted[i] {
			continue
		}
		i++
		if e, ok := s.hosts[h.Name]; !ok || recreated(e.host, h) {
			return h.Name
		}
	}
	// Names not paired with a host (not in Hosts' order): by name alone.
	for _, n := range omitted[i:] {
		if _, ok := s.hosts[n]; !ok {
			return n
		}
	}
	return ""
}

func (s *store) remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.hosts, name)
}

// removeEntry removes name's entry if it is still e, not a host created
// again under the same name since (upsert replaced it).
func (s *store) removeEntry(name string, e *hostEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hosts[name] == e {
		delete(s.hosts, name)
	}
}

// names returns every host name, sorted.
func (s *store) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.hosts))
	for n := range s.hosts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// with runs fn on the entry of name under the lock; ok is false (and fn
// not called) when the host is unknown.
func (s *store) with(name string, fn func(e *hostEntry)) bool {
	return s.entry(name, fn) != nil
}

// entry runs fn on the entry of name under the lock, as with does, and
// returns the entry (nil when the host is unknown): the reconcile loop
// keeps it to touch only this host, not one created again under the same
// name while it ran (withEntry).
func (s *store) entry(name string, fn func(e *hostEntry)) *hostEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.hosts[name]
	if e != nil {
		fn(e)
	}
	return e
}

// withEntry runs fn on e under the lock if e is still name's entry (not
// removed, nor replaced by a host created again under the same name); ok
// reports whether it ran.
func (s *store) withEntry(name string, e *hostEntry, fn func(e *hostEntry)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e == nil || s.hosts[name] != e {
		return false
	}
	fn(e)
	return true
}

// countByState counts hosts by provisioning state and by operational status.
func (s *store) countByState() (prov, op map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prov, op = map[string]int{}, map[string]int{}
	for _, e := range s.hosts {
		if e.status == nil {
			prov["new"]++
			continue
		}
		prov[e.status.ProvisioningState]++
		op[e.status.OperationalStatus]++
	}
	return prov, op
}

// sameStatus compares two statuses ignoring LastUpdated and Epoch, which
// the coordinator stamps.
func sameStatus(a, b *wire.HostStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.LastUpdated, y.LastUpdated = time.Time{}, time.Time{}
	x.Epoch, y.Epoch = 0, 0
	if len(x.Extra) == 0 {
		x.Extra = nil
	}
	if len(y.Extra) == 0 {
		y.Extra = nil
	}
	return reflect.DeepEqual(x, y)
}
