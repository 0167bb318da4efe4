package coordinator

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/fence"
)

// leaseTimers is the leader's expiry clock: one timer per held lease, reset
// by every grant or renewal to fence.ExpiryDelay(ttl). When one fires, the
// leader applies a LeaseExpireCmd, which the FSM honours only if the lease
// is still the grant or renewal the timer was armed for.
type leaseTimers struct {
	s  *Store
	mu sync.Mutex
	m  map[string]*timerEntry
}

type timerEntry struct{ t *time.Timer }

func newLeaseTimers(s *Store) *leaseTimers {
	return &leaseTimers{s: s, m: map[string]*timerEntry{}}
}

// changed is the FSM's hook: arm or stop timers when this node leads.
func (lt *leaseTimers) changed(cs []LeaseChange) {
	if !lt.s.IsLeader() {
		return
	}
	for _, c := range cs {
		if c.Lease == nil {
			lt.stop(c.Rack)
			continue
		}
		lt.arm(c.Rack, *c.Lease)
	}
}

func (lt *leaseTimers) stop(rack string) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if e := lt.m[rack]; e != nil {
		e.t.Stop()
		delete(lt.m, rack)
	}
}

// arm (re)starts the rack's timer with the full expiry delay from now.
func (lt *leaseTimers) arm(rack string, l leaseRec) {
	d := fence.ExpiryDelay(l.TTL)
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if e := lt.m[rack]; e != nil {
		e.t.Stop()
	} else {
		// The rack's expiry counter exists (at 0) from the first lease
		// this leader times, so increase() sees its first expiry.
		lt.s.cfg.Metrics.initExpiry(rack)
	}
	e := &timerEntry{}
	e.t = time.AfterFunc(d, func() { lt.fire(rack, l, e) })
	lt.m[rack] = e
}

// armAll re-arms every lease with a full TTL + margin (new leader).
func (lt *leaseTimers) armAll(ls map[string]leaseRec) {
	for rack, l := range ls {
		lt.arm(rack, l)
	}
}

func (lt *leaseTimers) stopAll() {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for r, e := range lt.m {
		e.t.Stop()
		delete(lt.m, r)
	}
}

func (lt *leaseTimers) fire(rack string, l leaseRec, self *timerEntry) {
	lt.mu.Lock()
	if lt.m[rack] != self {
		lt.mu.Unlock()
		return
	}
	delete(lt.m, rack)
	lt.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if !lt.s.IsLeader() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		v, err := lt.s.Apply(ctx, LeaseExpireCmd{Rack: rack, Epoch: l.Epoch, RenewIndex: l.RenewIndex, Time: time.Now().UTC()})
		cancel()
		if err == nil {
			if v == true {
				lt.s.log.Info("lease expired", "rack", rack, "holder", l.Holder, "epoch", l.Epoch)
				lt.s.cfg.Metrics.observeExpiry(rack)
			}
			return
		}
		if errors.Is(err, ErrNotLeader) || errors.Is(err, ErrShutdown) {
			return
		}
		lt.s.log.Warn("applying a lease expiry failed; retrying", "rack", rack, "epoch", l.Epoch, "err", err)
		select {
		case <-time.After(time.Second):
		case <-lt.s.closing:
			return
		}
	}
}
