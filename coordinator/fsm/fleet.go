package fsm

import (
	"maps"

	"github.com/rackfence/rackfence/shared/wire"
)

// Fleet is what the FSM holds, counted for metrics and alerts: the host
// counts as Apply keeps them, the racks in one pass under the read lock.
type Fleet struct {
	// ByState counts hosts by provisioning state ("none" = no status yet).
	ByState map[string]int
	// ByStatus counts hosts by operational status ("none" = no status yet).
	ByStatus map[string]int
	// Errors counts hosts whose operational status is error, by rack and
	// error type.
	Errors map[RackError]int
	// Racks is every rack with hosts, a lease or lease history.
	Racks map[string]RackFigures
	// Pending lists intents not yet acknowledged by a lease holder.
	Pending []PendingIntent
	// Pivots lists hosts in the middle of a pivot, on either side.
	Pivots []PivotInFlight
	// Leases is the number of racks whose lease is held.
	Leases int
	// Tasks lists the BMC task records (Host.Task) of every host.
	Tasks []wire.BMCTask
}

// RackError keys Fleet.Errors.
type RackError struct{ Rack, Type string }

// RackFigures are one rack's figures.
type RackFigures struct {
	Hosts int
	Held  bool
	// Epoch is the epoch of the rack's last lease grant (held or not); it
	// grows with every grant, so its changes count lease turnovers.
	Epoch uint64
}

// PendingIntent is one unacknowledged intent.
type PendingIntent struct {
	Host, Rack, Kind string
	CreatedIndex     uint64
}

// Pivot sides of PivotInFlight.
const (
	// PivotSource: detached here for a pivot, not yet handed off.
	PivotSource = "source"
	// PivotDestination: handed to this tier, not yet adopted here.
	PivotDestination = "destination"
)

// PivotInFlight is one host in the middle of a pivot.
type PivotInFlight struct {
	Host, Side string
	// Since is the index the pivot is identified by (the detach's
	// createdIndex on both sides).
	Since uint64
}

// pivotReason is the detach reason the pivot package records.
const pivotReason = "pivot to "

// Fleet counts the FSM's hosts and racks. The host counts are kept by
// Apply (fleet_counts.go); only the racks are walked, so the read lock is
// held for O(racks + pending items), whatever the number of hosts.
func (f *FSM) Fleet() Fleet {
	f.mu.RLock()
	defer f.mu.RUnlock()
	c := f.fleet
	fl := Fleet{ByState: maps.Clone(c.byState), ByStatus: maps.Clone(c.byStatus), Errors: maps.Clone(c.errors),
		Racks: make(map[string]RackFigures, len(f.s.Racks))}
	for _, it := range c.items {
		fl.Pending = append(fl.Pending, it.pending...)
		fl.Pivots = append(fl.Pivots, it.pivots...)
		if it.task != nil {
			fl.Tasks = append(fl.Tasks, *it.task)
		}
	}
	for name, r := range f.s.Racks {
		rf := RackFigures{Hosts: len(r.Hosts), Held: r.Lease != nil}
		if r.Lease != nil {
			rf.Epoch = r.Lease.Epoch
			fl.Leases++
		} else if n := len(r.History); n > 0 {
			rf.Epoch = r.History[n-1].Epoch
		}
		if rf.Hosts == 0 && !rf.Held && rf.Epoch == 0 {
			continue
		}
		fl.Racks[name] = rf
	}
	return fl
}

// adopted reports whether a pivoted-in host's agent has taken it over:
// the same test the source's pivot step applies (coordinator/pivot).
func adopted(st *wire.HostStatus) bool {
	if st == nil || st.OperationalStatus != wire.OpOK {
		return false
	}
	switch st.ProvisioningState {
	case wire.StateExternallyProvisioned, wire.StateAvailable, wire.StateProvisioned:
		return true
	}
	return false
}
