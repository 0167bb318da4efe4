package coordinator

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
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
	// apply and leading are the store's Apply and IsLeader (a test's
	// stand-ins); retry paces the attempts of an expiry that failed.
	apply   func(context.Context, fsm.Command) (any, error)
	leading func() bool
	retry   expiryRetry
}

// expiryRetry paces a failed expiry: each attempt waits up to timeout;
// the pause after a failure starts at base and doubles up to max (with
// jitter), so a leader too busy to commit is not handed one more entry
// per rack every second.
type expiryRetry struct {
	timeout, base, max time.Duration
}

var defaultExpiryRetry = expiryRetry{timeout: 10 * time.Second, base: time.Second, max: 30 * time.Second}

type timerEntry struct {
	t        *time.Timer
	deadline time.Time // when t fires
}

func newLeaseTimers(s *Store) *leaseTimers {
	return &leaseTimers{s: s, m: map[string]*timerEntry{}, apply: s.Apply, leading: s.IsLeader, retry: defaultExpiryRetry}
}

// changed is the FSM's hook: arm or stop timers when this node leads.
func (lt *leaseTimers) changed(cs []fsm.LeaseChange) {
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
func (lt *leaseTimers) arm(rack string, l fsm.LeaseRec) {
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
	e := &timerEntry{deadline: time.Now().Add(d)}
	e.t = time.AfterFunc(d, func() { lt.fire(rack, l, e) })
	lt.m[rack] = e
}

// left is how long rack's lease has before this leader expires it; false
// when no timer runs for rack (free rack, or this node does not lead).
func (lt *leaseTimers) left(rack string) (time.Duration, bool) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	e := lt.m[rack]
	if e == nil {
		return 0, false
	}
	return max(time.Until(e.deadline), 0), true
}

// LeaseTimeLeft is how long rack's lease has before this member, as leader,
// expires it; false when this member does not lead or the rack is free.
func (s *Store) LeaseTimeLeft(rack string) (time.Duration, bool) {
	if !s.IsLeader() {
		return 0, false
	}
	return s.timers.left(rack)
}

// armAll re-arms every lease with a full TTL + margin (new leader).
func (lt *leaseTimers) armAll(ls map[string]fsm.LeaseRec) {
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

func (lt *leaseTimers) fire(rack string, l fsm.LeaseRec, self *timerEntry) {
	lt.mu.Lock()
	if lt.m[rack] != self {
		lt.mu.Unlock()
		return
	}
	delete(lt.m, rack)
	lt.mu.Unlock()
	wait := lt.retry.base
	for attempt := 0; ; attempt++ {
		if !lt.leading() {
			return
		}
		if attempt > 0 && !lt.stillDue(rack, l) {
			// Renewed, re-granted, released, or expired by an earlier
			// attempt that landed after its timeout: nothing to expire.
			lt.s.log.Info("lease expiry retry stopped: the lease changed meanwhile", "rack", rack, "epoch", l.Epoch, "attempts", attempt)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), lt.retry.timeout)
		v, err := lt.apply(ctx, fsm.LeaseExpireCmd{Rack: rack, Epoch: l.Epoch, RenewIndex: l.RenewIndex, Time: time.Now().UTC()})
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
		pause := jitter(wait)
		lt.s.log.Warn("applying a lease expiry failed; retrying", "rack", rack, "epoch", l.Epoch, "attempt", attempt+1, "retry_in", pause.String(), "err", err)
		select {
		case <-time.After(pause):
		case <-lt.s.closing:
			return
		}
		wait = min(2*wait, lt.retry.max)
	}
}

// stillDue reports whether rack still holds the lease l the timer fired
// for: same epoch and renewal, not expired. Anything else means a later
// write (a renewal, a new grant, a release, or an earlier expiry attempt
// that landed after all) settled it, and the FSM's compare-and-set would
// only refuse another attempt.
func (lt *leaseTimers) stillDue(rack string, l fsm.LeaseRec) bool {
	cur, ok := lt.s.fsm.LeaseOf(rack)
	return ok && cur.Epoch == l.Epoch && cur.RenewIndex == l.RenewIndex
}

// jitter is d spread over [d/2, d): timers that fired together do not
// retry together.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}
