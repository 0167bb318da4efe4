package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
)

// leaseKeeper acquires and renews the rack lease. Its deadline is measured
// on the agent's monotonic clock from before each request was sent
// (fence.HolderDeadline), so however long the answer took, or however long
// the process was paused, the agent stops before the coordinator may grant
// the rack to anyone else.
type leaseKeeper struct {
	c      LeaseAPI
	rack   string
	holder string
	ttl    time.Duration
	h      *fence.Holder
	log    *slog.Logger
	m      *Metrics
	// kick asks for a renewal now (the watch saw a lease that is not ours).
	kick chan struct{}
}

func newLeaseKeeper(cfg *Config) *leaseKeeper {
	return &leaseKeeper{c: cfg.Client, rack: cfg.Rack, holder: cfg.AgentID, ttl: cfg.LeaseTTL,
		h: cfg.Holder, log: cfg.Logger, m: cfg.Metrics, kick: make(chan struct{}, 1)}
}

// standbyInterval is how often a standby asks for the lease: often enough
// that it takes over within about a second of a release.
func (k *leaseKeeper) standbyInterval() time.Duration {
	return min(k.ttl/4, time.Second)
}

// acquire blocks until the lease is granted (installed in the Holder) or
// ctx ends. While another agent holds the rack it stands by and retries.
func (k *leaseKeeper) acquire(ctx context.Context, onStandby func()) (fence.Lease, error) {
	bo := newBackoff(200*time.Millisecond, 5*time.Second)
	standby := false
	for {
		sentAt := time.Now()
		rctx, cancel := context.WithTimeout(ctx, k.ttl)
		l, err := k.c.AcquireLease(rctx, k.rack, wire.LeaseRequest{Holder: k.holder, TTL: wire.Duration(k.ttl)})
		cancel()
		if err == nil {
			lease, ok := k.install(sentAt, l)
			if ok {
				k.log.Info("rack lease acquired", "rack", k.rack, "epoch", lease.Epoch, "ttl", lease.TTL)
				return lease, nil
			}
			k.log.Warn("rack lease granted too late to use (the answer took longer than the TTL minus margin); asking again",
				"rack", k.rack, "epoch", l.Epoch)
			continue
		}
		if ctx.Err() != nil {
			return fence.Lease{}, ctx.Err()
		}
		var wait time.Duration
		if client.IsConflict(err) {
			if !standby {
				k.log.Info("rack held by another agent; standing by", "rack", k.rack, "detail", err.Error())
				standby = true
				k.m.setLease(leaseStandby)
				if onStandby != nil {
					onStandby()
				}
			}
			bo.reset()
			wait = jitter(k.standbyInterval(), 0.3)
		} else if client.IsUnauthorized(err) || client.IsForbidden(err) {
			wait = bo.next()
			k.log.Error("the coordinator refused this agent's token for the rack lease; create one with: rackfencectl token create --role agent --rack "+k.rack,
				"rack", k.rack, "err", err.Error(), "retryIn", wait)
		} else {
			wait = bo.next()
			k.log.Warn("cannot acquire the rack lease; retrying", "rack", k.rack, "err", err.Error(), "retryIn", wait)
		}
		if !sleepCtx(ctx, wait) {
			return fence.Lease{}, ctx.Err()
		}
	}
}

// install puts a granted or renewed lease into the Holder, with its
// deadline from sentAt. ok is false when that deadline already passed.
func (k *leaseKeeper) install(sentAt time.Time, l *wire.Lease) (fence.Lease, bool) {
	ttl := l.TTL.D()
	if ttl <= 0 {
		ttl = k.ttl
	}
	lease := fence.Lease{Rack: k.rack, Holder: k.holder, Epoch: l.Epoch, TTL: ttl,
		Deadline: fence.HolderDeadline(sentAt, ttl)}
	if !time.Now().Before(lease.Deadline) {
		return lease, false
	}
	k.h.Set(lease)
	k.m.setLease(leaseHeld)
	k.m.leaseEpoch.Set(float64(l.Epoch))
	return lease, true
}

// keep renews the lease about every TTL/3 until ctx ends (nil) or the lease
// is lost (ErrLeaseLost): the deadline passed, or the coordinator refused a
// renewal. It does not clear the Holder; the caller does.
func (k *leaseKeeper) keep(ctx context.Context, lease fence.Lease) error {
	deadline := time.NewTimer(time.Until(lease.Deadline))
	defer deadline.Stop()
	every := lease.TTL / 3
	next := time.NewTimer(every)
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			if _, ok := k.h.Valid(0); !ok {
				return fmt.Errorf("%w: deadline of epoch %d passed without a successful renewal", ErrLeaseLost, lease.Epoch)
			}
			cur := k.h.Current()
			deadline.Reset(time.Until(cur.Deadline))
			continue
		case <-k.kick:
		case <-next.C:
		}
		// Renew, bounded by the current deadline: past it the lease is
		// useless anyway.
		cur := k.h.Current()
		if cur.Epoch != lease.Epoch {
			return fmt.Errorf("%w: lease of epoch %d replaced", ErrLeaseLost, lease.Epoch)
		}
		sentAt := time.Now()
		rctx, cancel := context.WithDeadline(ctx, cur.Deadline)
		l, err := k.c.RenewLease(rctx, k.rack, wire.LeaseRequest{Holder: k.holder, Epoch: lease.Epoch, TTL: wire.Duration(lease.TTL)})
		cancel()
		switch {
		case err == nil && l.Epoch == lease.Epoch:
			if nl, ok := k.install(sentAt, l); ok {
				deadline.Reset(time.Until(nl.Deadline))
			}
			next.Reset(every)
		case err == nil:
			return fmt.Errorf("%w: renewal answered epoch %d, ours is %d", ErrLeaseLost, l.Epoch, lease.Epoch)
		case ctx.Err() != nil:
			return nil
		case client.IsConflict(err) || client.IsStaleEpoch(err) || client.IsNotFound(err):
			return fmt.Errorf("%w: renewal of epoch %d refused: %v", ErrLeaseLost, lease.Epoch, err)
		case errors.Is(err, context.DeadlineExceeded):
			// The deadline timer fires next and decides.
			next.Reset(max(time.Until(cur.Deadline), 50*time.Millisecond))
		default:
			retry := jitter(max(lease.TTL/20, 100*time.Millisecond), 0.5)
			k.log.Warn("rack lease renewal failed; retrying before the deadline", "rack", k.rack,
				"epoch", lease.Epoch, "err", err.Error(), "retryIn", retry, "leaseLeft", time.Until(cur.Deadline).Round(time.Millisecond))
			next.Reset(retry)
		}
	}
}

// renewNow asks keep to renew at once.
func (k *leaseKeeper) renewNow() {
	select {
	case k.kick <- struct{}{}:
	default:
	}
}

// release gives the lease back so a standby takes over at once. The Holder
// must already be cleared: nothing may be mutated after this.
func (k *leaseKeeper) release(ctx context.Context, lease fence.Lease) error {
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err := k.c.ReleaseLease(rctx, k.rack, wire.LeaseRequest{Holder: k.holder, Epoch: lease.Epoch})
	k.m.setLease(leaseNone)
	return err
}
