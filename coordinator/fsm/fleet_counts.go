package fsm

import (
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// fleetCounts is the per-host part of Fleet, kept by Apply under the write
// lock it already holds (every host record stored or removed passes
// through count) and rebuilt from the hosts on Restore. A scrape then costs
// O(states + racks + pending items), never a walk of every host: at
// 100,000 hosts that walk held the read lock for hundreds of
// milliseconds, and every Apply queued behind it.
type fleetCounts struct {
	byState, byStatus map[string]int
	errors            map[RackError]int
	// items holds, for each host that has any, its pending intents,
	// pivots and BMC task record.
	items map[string]hostItems
}

// hostItems are one host's entries of Fleet's lists.
type hostItems struct {
	pending []PendingIntent
	pivots  []PivotInFlight
	task    *wire.BMCTask
}

func newFleetCounts() *fleetCounts {
	return &fleetCounts{byState: map[string]int{}, byStatus: map[string]int{},
		errors: map[RackError]int{}, items: map[string]hostItems{}}
}

// countFleet counts hosts from scratch (a restore, a new FSM).
func countFleet(hosts map[string]*hostEntry) *fleetCounts {
	c := newFleetCounts()
	for _, h := range hosts {
		c.swap(nil, h)
	}
	return c
}

// hostKeys is what a host adds to the counts.
type hostKeys struct {
	state, status string
	err           *RackError
}

func keysOf(h *hostEntry) hostKeys {
	k := hostKeys{state: "none", status: "none"}
	if st := h.Status; st != nil {
		if st.ProvisioningState != "" {
			k.state = st.ProvisioningState
		}
		if st.OperationalStatus != "" {
			k.status = st.OperationalStatus
		}
		if st.OperationalStatus == wire.OpError {
			k.err = &RackError{h.Rack, st.ErrorType}
		}
	}
	return k
}

func (k hostKeys) same(o hostKeys) bool {
	return k.state == o.state && k.status == o.status && (k.err == nil) == (o.err == nil) && (k.err == nil || *k.err == *o.err)
}

// swap replaces old's share of the counts by nu's; either may be nil (a
// host created or removed).
func (c *fleetCounts) swap(old, nu *hostEntry) {
	var ok, nk hostKeys
	if old != nil {
		ok = keysOf(old)
	}
	if nu != nil {
		nk = keysOf(nu)
	}
	if old == nil || nu == nil || !ok.same(nk) {
		if old != nil {
			c.add(ok, -1)
		}
		if nu != nil {
			c.add(nk, 1)
		}
	}
	if old != nil {
		delete(c.items, old.Name)
	}
	if nu != nil {
		if it, any := itemsOf(nu); any {
			c.items[nu.Name] = it
		}
	}
}

func (c *fleetCounts) add(k hostKeys, d int) {
	bump(c.byState, k.state, d)
	bump(c.byStatus, k.status, d)
	if k.err != nil {
		bump(c.errors, *k.err, d)
	}
}

// bump adds d to m[k], forgetting a key that falls to zero (Fleet lists
// only what some host has).
func bump[K comparable](m map[K]int, k K, d int) {
	if n := m[k] + d; n != 0 {
		m[k] = n
	} else {
		delete(m, k)
	}
}

// itemsOf is h's pending intents, pivots in flight and BMC task record,
// and whether it has any.
func itemsOf(h *hostEntry) (hostItems, bool) {
	var it hostItems
	if in := h.Intents; in != nil {
		for _, k := range []struct {
			kind string
			i    *wire.Intent
		}{{wire.IntentDetach, in.Detach}, {wire.IntentDrain, in.Drain}, {wire.IntentResume, in.Resume},
			{wire.IntentReboot, in.Reboot}, {wire.IntentInspect, in.Inspect}, {wire.IntentService, in.Service}} {
			if k.i != nil && !k.i.Acknowledged {
				it.pending = append(it.pending, PendingIntent{Host: h.Name, Rack: h.Rack, Kind: k.kind, CreatedIndex: k.i.CreatedIndex})
			}
		}
		for _, p := range in.PowerOff {
			if !p.Acknowledged {
				it.pending = append(it.pending, PendingIntent{Host: h.Name, Rack: h.Rack, Kind: wire.IntentPowerOff, CreatedIndex: p.CreatedIndex})
			}
		}
		if d := in.Detach; d != nil && h.pivotedTo() == "" && strings.HasPrefix(d.Reason, pivotReason) {
			it.pivots = append(it.pivots, PivotInFlight{Host: h.Name, Side: PivotSource, Since: d.CreatedIndex})
		}
	}
	it.task = h.task()
	if hf := h.handoff(); hf != nil && !adopted(h.Status) {
		it.pivots = append(it.pivots, PivotInFlight{Host: h.Name, Side: PivotDestination, Since: hf.DetachIndex})
	}
	return it, len(it.pending) > 0 || len(it.pivots) > 0 || it.task != nil
}
