// Package agent is the rack agent: it holds its rack's lease, follows the
// coordinator's watch for the rack, runs one agent/hoststate machine per
// host on a bounded worker pool, drives the hosts through a provisioner,
// and writes their status back stamped with its lease epoch. See DESIGN.md.
package agent

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfence/rackfence/shared/fence"
)

// Agent is one rack agent. Create it with New and run it with Run.
type Agent struct {
	cfg    Config
	log    *slog.Logger
	keeper *leaseKeeper
	creds  *credCache
	// cur is the running session (nil while standing by).
	cur atomic.Pointer[session]
	// writeSlots bounds the status writes in flight (Config.StatusWriters).
	writeSlots chan struct{}
	// rackLegacyUntil (unix ns): until then status goes out per host, the
	// coordinator having answered that it lacks the rack endpoint.
	rackLegacyUntil atomic.Int64
	// rackNoCreatedUntil (unix ns): until then rack reports name no
	// createdIndex, the coordinator having refused the field
	// (reporter_created.go).
	rackNoCreatedUntil atomic.Int64
	// noDayTwoUntil (unix ns): until then statuses go out without dayTwo,
	// the coordinator having refused it (reporter_newer.go).
	noDayTwoUntil atomic.Int64
	// noDriveServerUntil (unix ns): until then statuses go out without
	// configDrive.server, the coordinator having refused it.
	noDriveServerUntil atomic.Int64
	// noHealthUntil (unix ns): until then statuses carry no hardware
	// health (reporter_newer.go).
	noHealthUntil atomic.Int64
}

// New checks cfg, fills its defaults and returns an Agent.
func New(cfg Config) (*Agent, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, creds: newCredCache(cfg.Client), writeSlots: make(chan struct{}, cfg.StatusWriters)}
	a.keeper = newLeaseKeeper(&a.cfg)
	cfg.Metrics.setSource(a)
	return a, nil
}

// Run runs the agent until ctx ends: acquire the lease (standing by while
// another agent holds it), manage the rack while the lease lasts, drop
// everything when it is lost and start over. When ctx ends it finishes or
// abandons in-flight calls within ShutdownGrace, then releases the lease.
func (a *Agent) Run(ctx context.Context) error {
	var once sync.Once
	running := func() {
		once.Do(func() {
			if a.cfg.OnRunning != nil {
				a.cfg.OnRunning()
			}
		})
	}
	// Sessions that end quickly in a row (e.g. writes refused as stale
	// right after each grant) back off instead of spinning.
	churn := newBackoff(500*time.Millisecond, 10*time.Second)
	for {
		lease, err := a.keeper.acquire(ctx, running)
		if err != nil {
			if ctx.Err() != nil {
				a.log.Info("agent stopped", "rack", a.cfg.Rack)
				return nil
			}
			return err
		}
		running()
		began := time.Now()
		err = a.runSession(ctx, lease)
		if ctx.Err() != nil {
			return nil
		}
		a.log.Warn("lost the rack lease; dropped all host state, standing by", "rack", a.cfg.Rack,
			"epoch", lease.Epoch, "reason", err.Error())
		if time.Since(began) > 30*time.Second {
			churn.reset()
			continue
		}
		if !sleepCtx(ctx, churn.next()) {
			return nil
		}
	}
}

// runSession manages the rack under one lease until the lease is lost
// (returns the reason) or ctx ends (shuts down and releases the lease).
func (a *Agent) runSession(ctx context.Context, lease fence.Lease) error {
	s := newSession(a, lease)
	keepCtx, stopKeep := context.WithCancel(context.Background())
	keepDone := make(chan error, 1)
	go func() { keepDone <- a.keeper.keep(keepCtx, lease) }()
	a.cur.Store(s)
	defer a.cur.Store(nil)
	s.start()

	var reason error
	keeperDone := false
	select {
	case reason = <-keepDone:
		keeperDone = true
	case <-s.ctx.Done():
		reason = context.Cause(s.ctx)
	case <-ctx.Done():
	}
	if reason != nil {
		// Fenced: stop every in-flight call now (the Holder's context
		// cancels guarded calls) and forget the session.
		a.cfg.Holder.Clear()
		a.cfg.Metrics.setLease(leaseNone)
		s.stop(reason)
		stopKeep()
		if !keeperDone {
			<-keepDone
		}
		return reason
	}

	// Shutdown: finish in-flight calls within the grace period while the
	// lease keeps being renewed, then abandon the rest, stop mutating, and
	// release the lease so a standby takes over at once.
	a.log.Info("shutting down: finishing in-flight calls", "rack", a.cfg.Rack, "grace", a.cfg.ShutdownGrace)
	s.drain()
	done := make(chan struct{})
	go func() { s.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(a.cfg.ShutdownGrace):
		a.log.Warn("shutdown grace passed; abandoning in-flight calls", "rack", a.cfg.Rack)
	}
	a.cfg.Holder.Clear()
	s.stop(ErrShutdown)
	stopKeep()
	<-keepDone
	if err := a.keeper.release(context.Background(), lease); err != nil {
		a.log.Warn("could not release the rack lease; a standby takes over once it expires", "rack", a.cfg.Rack, "err", err.Error())
	} else {
		a.log.Info("rack lease released", "rack", a.cfg.Rack, "epoch", lease.Epoch)
	}
	return ErrShutdown
}
