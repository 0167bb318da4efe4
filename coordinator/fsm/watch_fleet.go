package fsm

import (
	"context"
	"sort"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// fleetChanges answers a watch of every rack after index: one entry per
// rack changed since (index 0: every rack, everything now), and whether
// anything changed.
func (f *FSM) fleetChanges(after uint64) (wire.FleetWatchResponse, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	resp := wire.FleetWatchResponse{Index: f.applied.Load(), Racks: []wire.RackWatch{}}
	for name, r := range f.s.Racks {
		if after != 0 && r.watchIndex() <= after {
			continue
		}
		w := wire.WatchResponse{Hosts: []wire.Host{}}
		rackChanges(r, name, after, &w)
		resp.Racks = append(resp.Racks, wire.RackWatch{Rack: name, Hosts: w.Hosts, Deleted: w.Deleted, Reset: w.Reset, Lease: w.Lease})
	}
	sort.Slice(resp.Racks, func(i, j int) bool { return resp.Racks[i].Rack < resp.Racks[j].Rack })
	return resp, after == 0 || len(resp.Racks) > 0
}

// WatchFleet is Watch over every rack at once (the dashboard's view): it
// blocks until anything of any rack changed after index or timeout passed.
// It wakes at every applied entry and skips racks with no change a watcher
// sees (watchIndex), so one fleet watcher costs one pass over the racks
// per entry.
func (f *FSM) WatchFleet(ctx context.Context, after uint64, timeout <-chan time.Time) (wire.FleetWatchResponse, error) {
	for {
		ch := f.appliedWait()
		resp, changed := f.fleetChanges(after)
		if changed {
			return resp, nil
		}
		select {
		case <-ch:
		case <-timeout:
			resp, _ = f.fleetChanges(after)
			return resp, nil
		case <-ctx.Done():
			return wire.FleetWatchResponse{}, ctx.Err()
		}
	}
}

// WaitFleetChange is WaitChange for the watch of every rack: it blocks
// until any rack has a change after index a watcher sees, timeout passed
// or ctx ended, and builds no answer.
func (f *FSM) WaitFleetChange(ctx context.Context, after uint64, timeout <-chan time.Time) (bool, error) {
	return waitFor(ctx, f.appliedWait, func() bool { return f.fleetHasChange(after) }, timeout)
}

// fleetHasChange is whether fleetChanges would answer a change.
func (f *FSM) fleetHasChange(after uint64) bool {
	if after == 0 {
		return true
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, r := range f.s.Racks {
		if r.watchIndex() > after {
			return true
		}
	}
	return false
}
