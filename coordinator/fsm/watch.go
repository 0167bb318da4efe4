package fsm

import (
	"context"
	"sort"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// rackChanges fills w with what changed in r after index: hosts modified
// since, names deleted since, or every host with Reset when after is older
// than the deletions r remembers. after 0 means everything now. The caller
// holds f.mu.
func rackChanges(r *rackRec, rack string, after uint64, w *wire.WatchResponse) {
	w.Lease = r.Lease.wire(rack)
	all := after == 0 || after < r.TombFloor
	w.Reset = after != 0 && after < r.TombFloor
	for _, h := range r.Hosts {
		if all || h.ModifiedIndex > after {
			w.Hosts = append(w.Hosts, h.host())
		}
	}
	sort.Slice(w.Hosts, func(i, j int) bool { return w.Hosts[i].Name < w.Hosts[j].Name })
	if !all {
		for _, tb := range r.Tombs {
			if tb.Index > after {
				if _, back := r.Hosts[tb.Name]; !back {
					w.Deleted = append(w.Deleted, tb.Name)
				}
			}
		}
	}
}

// changes answers a watch of rack after index, and whether anything
// changed (index 0 always counts as a change: everything now).
func (f *FSM) changes(rack string, after uint64) (wire.WatchResponse, bool) {
	return f.changesOf(rack, after, true)
}

// changesOf is changes for a watch with or without statuses: a
// status-less one is not answered for a change of hosts' statuses alone
// (watch_index.go).
func (f *FSM) changesOf(rack string, after uint64, withStatus bool) (wire.WatchResponse, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	resp := wire.WatchResponse{Index: f.applied.Load(), Hosts: []wire.Host{}}
	r := f.s.Racks[rack]
	if r == nil {
		return resp, after == 0
	}
	last := r.watchIndex()
	if !withStatus {
		last = r.statuslessIndex()
	}
	if after != 0 && last <= after {
		resp.Lease = r.Lease.wire(rack)
		return resp, false
	}
	rackChanges(r, rack, after, &resp)
	f.answers.Add(1)
	return resp, true
}

// WatchAnswers is how many rack watch answers carrying changes this FSM
// built: watchers waiting for the same rack at the same index share one
// (coordinator/api, watch_share.go), so it grows by about one per change,
// not one per watcher.
func (f *FSM) WatchAnswers() uint64 { return f.answers.Load() }

// Watch blocks until something about rack changed after index (hosts,
// deletions, its lease) or timeout passed, and answers the changes with the
// applied index they reflect. A watcher that follows Index from answer to
// answer sees every change.
func (f *FSM) Watch(ctx context.Context, rack string, after uint64, timeout <-chan time.Time) (wire.WatchResponse, error) {
	return f.watch(ctx, rack, after, timeout, true)
}

// WatchWithoutStatus is Watch for a watcher that takes no statuses (the
// API leaves them out): a write of hosts' statuses alone does not answer
// it (watch_index.go). The answer is as Watch's, statuses included;
// a host changed only in its status may ride along with another change.
func (f *FSM) WatchWithoutStatus(ctx context.Context, rack string, after uint64, timeout <-chan time.Time) (wire.WatchResponse, error) {
	return f.watch(ctx, rack, after, timeout, false)
}

func (f *FSM) watch(ctx context.Context, rack string, after uint64, timeout <-chan time.Time, withStatus bool) (wire.WatchResponse, error) {
	for {
		ch := f.rackWait(rack)
		resp, changed := f.changesOf(rack, after, withStatus)
		if changed {
			return resp, nil
		}
		select {
		case <-ch:
		case <-timeout:
			resp, _ = f.changesOf(rack, after, withStatus)
			return resp, nil
		case <-ctx.Done():
			return wire.WatchResponse{}, ctx.Err()
		}
	}
}

// WaitApplied blocks until the FSM applied index.
func (f *FSM) WaitApplied(ctx context.Context, index uint64) error {
	for {
		ch := f.appliedWait()
		if f.applied.Load() >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitChange blocks until rack has a change after index that a watcher
// with (or without) statuses sees, timeout passed or ctx ended, and
// reports whether there is one. It builds no answer: the API waits once
// for a crowd of watchers with it, then builds their one answer with
// Watch (coordinator/api, watch_share.go).
func (f *FSM) WaitChange(ctx context.Context, rack string, after uint64, withStatus bool, timeout <-chan time.Time) (bool, error) {
	return waitFor(ctx, func() <-chan struct{} { return f.rackWait(rack) },
		func() bool { return f.hasChange(rack, after, withStatus) }, timeout)
}

// waitFor blocks until has says yes, timeout passed or ctx ended; wake
// gives the channel closed at the next change (taken before has is asked,
// so no change falls between the two).
func waitFor(ctx context.Context, wake func() <-chan struct{}, has func() bool, timeout <-chan time.Time) (bool, error) {
	for {
		ch := wake()
		if has() {
			return true, nil
		}
		select {
		case <-ch:
		case <-timeout:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// hasChange is whether changesOf would answer a change.
func (f *FSM) hasChange(rack string, after uint64, withStatus bool) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	r := f.s.Racks[rack]
	if r == nil {
		return after == 0
	}
	last := r.watchIndex()
	if !withStatus {
		last = r.statuslessIndex()
	}
	return after == 0 || last > after
}
