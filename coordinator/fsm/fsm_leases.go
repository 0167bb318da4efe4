package fsm

import (
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// Lease ends recorded in the history.
const (
	EndReleased = "released"
	EndExpired  = "expired"
)

func (f *FSM) setLease(t *tx, rack string, r *rackRec, l *LeaseRec) {
	r.Lease = l
	r.Index = t.index
	t.touch(rack)
	t.leases = append(t.leases, LeaseChange{Rack: rack, Lease: l, Index: t.index})
}

// endLease closes the current lease's history record and frees the rack.
func (f *FSM) endLease(t *tx, rack string, r *rackRec, end string, at time.Time) {
	ep := r.Lease.Epoch
	for i := len(r.History) - 1; i >= 0; i-- {
		if r.History[i].Epoch == ep {
			rec := r.History[i]
			tm := at
			rec.EndedAt, rec.End = &tm, end
			r.History = append(append([]wire.LeaseRecord(nil), r.History[:i]...), append([]wire.LeaseRecord{rec}, r.History[i+1:]...)...)
			break
		}
	}
	f.setLease(t, rack, r, nil)
}

func (f *FSM) applyLeaseAcquire(t *tx, c LeaseAcquireCmd) (any, error) {
	r := f.s.rack(c.Rack)
	if cur := r.Lease; cur != nil {
		if cur.Holder != c.Holder {
			return nil, conflict("rack %s is held by %s under epoch %d (ttl %s); it is granted to another holder only after that lease expires or is released",
				c.Rack, cur.Holder, cur.Epoch, cur.TTL)
		}
		// The same holder asks again (e.g. it lost our answer): the old
		// epoch ends and a new one starts.
		f.endLease(t, c.Rack, r, EndReleased, c.Time)
	}
	l := &LeaseRec{Holder: c.Holder, Epoch: EpochAt(f.s.Generation, t.index), TTL: c.TTL, RenewIndex: t.index, GrantedAt: c.Time}
	hist := append([]wire.LeaseRecord(nil), r.History...)
	hist = append(hist, wire.LeaseRecord{Epoch: l.Epoch, Holder: l.Holder, GrantedAt: c.Time})
	if n := len(hist) - MaxLeaseHistory; n > 0 {
		hist = hist[n:]
	}
	r.History = hist
	f.setLease(t, c.Rack, r, l)
	return *l.wire(c.Rack), nil
}

func (f *FSM) currentLease(rack, holder string, epoch uint64) (*rackRec, error) {
	r := f.s.Racks[rack]
	if r == nil || r.Lease == nil {
		return nil, newErr(wire.CodeStaleEpoch, "rack %s has no lease now (epoch %d ended); acquire it again", rack, epoch)
	}
	if r.Lease.Epoch != epoch || r.Lease.Holder != holder {
		return nil, newErr(wire.CodeStaleEpoch, "epoch %d of %s is not current: rack %s is held by %s under epoch %d",
			epoch, holder, rack, r.Lease.Holder, r.Lease.Epoch)
	}
	return r, nil
}

func (f *FSM) applyLeaseRenew(t *tx, c LeaseRenewCmd) (any, error) {
	r, err := f.currentLease(c.Rack, c.Holder, c.Epoch)
	if err != nil {
		return nil, err
	}
	l := *r.Lease
	l.RenewIndex = t.index
	if c.TTL > 0 {
		l.TTL = c.TTL
	}
	if l.TTL != r.Lease.TTL {
		f.setLease(t, c.Rack, r, &l)
		return *l.wire(c.Rack), nil
	}
	// Same holder, epoch and TTL: the rack's watchers are not woken
	// (watch_index.go); the leader's expiry timer is re-armed all the same.
	r.Lease = &l
	r.quietChange(t.index)
	t.leases = append(t.leases, LeaseChange{Rack: c.Rack, Lease: &l, Index: t.index})
	return *l.wire(c.Rack), nil
}

func (f *FSM) applyLeaseRelease(t *tx, c LeaseReleaseCmd) (any, error) {
	r, err := f.currentLease(c.Rack, c.Holder, c.Epoch)
	if err != nil {
		return nil, err
	}
	l := r.Lease.wire(c.Rack)
	f.endLease(t, c.Rack, r, EndReleased, c.Time)
	f.s.dropRackIfEmpty(c.Rack)
	return *l, nil
}

// applyLeaseExpire is a compare-and-set: a renewal applied after the timer
// was armed (another RenewIndex) wins, and the expiry is a no-op.
func (f *FSM) applyLeaseExpire(t *tx, c LeaseExpireCmd) (any, error) {
	r := f.s.Racks[c.Rack]
	if r == nil || r.Lease == nil || r.Lease.Epoch != c.Epoch || r.Lease.RenewIndex != c.RenewIndex {
		return false, nil
	}
	f.endLease(t, c.Rack, r, EndExpired, c.Time)
	return true, nil
}
