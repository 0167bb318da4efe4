package coordinator

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// expiryTimers are lease timers over an FSM driven by hand, leading,
// whose expiry attempts go to apply, with short retry pauses.
func expiryTimers(t *testing.T, apply func(context.Context, fsm.Command) (any, error)) (*leaseTimers, *fsmT, *Store) {
	s := &Store{fsm: fsm.NewFSM(), log: slog.New(slog.NewTextHandler(io.Discard, nil)), closing: make(chan struct{})}
	lt := newLeaseTimers(s)
	lt.apply = apply
	lt.leading = func() bool { return true }
	lt.retry = expiryRetry{timeout: time.Second, base: time.Millisecond, max: 4 * time.Millisecond}
	return lt, &fsmT{t: t, f: s.fsm}, s
}

// fireNow runs the timer of rack's lease l as if it fired, and fails the
// test if the expiry is still retrying after 20s.
func fireNow(t *testing.T, lt *leaseTimers, s *Store, rack string, l fsm.LeaseRec, attempts *atomic.Int64) {
	t.Helper()
	e := &timerEntry{t: time.NewTimer(time.Hour), deadline: time.Now()}
	e.t.Stop()
	lt.mu.Lock()
	lt.m[rack] = e
	lt.mu.Unlock()
	done := make(chan struct{})
	go func() { lt.fire(rack, l, e); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		close(s.closing)
		<-done
		t.Fatalf("the expiry of %s still retries after 20s (%d attempts)", rack, attempts.Load())
	}
}

// TestLeaseExpiryRetryStopsWhenRenewed: an expiry attempt that timed
// out is not repeated once the holder's renewal landed meanwhile (each
// repeat is one more log entry on a leader already too busy to commit).
func TestLeaseExpiryRetryStopsWhenRenewed(t *testing.T) {
	var attempts atomic.Int64
	var h *fsmT
	lt, h, s := expiryTimers(t, func(context.Context, fsm.Command) (any, error) {
		if attempts.Add(1) == 1 {
			h.ok(fsm.LeaseRenewCmd{Rack: "r1", Holder: "a1", Epoch: 1, Time: t0.Add(time.Second)})
		}
		return nil, ErrOutcomeUnknown
	})
	l0 := h.ok(fsm.LeaseAcquireCmd{Rack: "r1", Holder: "a1", TTL: time.Minute, Time: t0}).(wire.Lease)
	l, _ := s.fsm.LeaseOf("r1")
	if l.Epoch != l0.Epoch {
		t.Fatalf("LeaseOf epoch %d, acquire answered %d", l.Epoch, l0.Epoch)
	}
	fireNow(t, lt, s, "r1", l, &attempts)
	if n := attempts.Load(); n != 1 {
		t.Errorf("expiry attempts = %d, want 1 (the renewal settled it)", n)
	}
	if cur, ok := s.fsm.LeaseOf("r1"); !ok || cur.Epoch != 1 {
		t.Errorf("lease after the renewal = %+v (held %v), want epoch 1 still held", cur, ok)
	}
}

// TestLeaseExpiryRetryStopsWhenAlreadyExpired: an attempt that timed
// out but landed later (the lease is gone) is not repeated.
func TestLeaseExpiryRetryStopsWhenAlreadyExpired(t *testing.T) {
	var attempts atomic.Int64
	var h *fsmT
	var l fsm.LeaseRec
	lt, h, s := expiryTimers(t, func(_ context.Context, c fsm.Command) (any, error) {
		if attempts.Add(1) == 1 {
			h.ok(c)
		}
		return nil, ErrOutcomeUnknown
	})
	h.ok(fsm.LeaseAcquireCmd{Rack: "r1", Holder: "a1", TTL: time.Minute, Time: t0})
	l, _ = s.fsm.LeaseOf("r1")
	fireNow(t, lt, s, "r1", l, &attempts)
	if n := attempts.Load(); n != 1 {
		t.Errorf("expiry attempts = %d, want 1 (the first one landed)", n)
	}
}

// TestLeaseExpiryRetriesUntilDue: the fence holds: a lease that is
// really due still expires after failed attempts, and the pauses
// between them grow.
func TestLeaseExpiryRetriesUntilDue(t *testing.T) {
	var attempts atomic.Int64
	var h *fsmT
	var at []time.Time
	lt, h, s := expiryTimers(t, func(_ context.Context, c fsm.Command) (any, error) {
		at = append(at, time.Now())
		if attempts.Add(1) <= 4 {
			return nil, ErrBusy
		}
		return h.apply(c)
	})
	lt.retry = expiryRetry{timeout: time.Second, base: 20 * time.Millisecond, max: 80 * time.Millisecond}
	h.ok(fsm.LeaseAcquireCmd{Rack: "r1", Holder: "a1", TTL: time.Minute, Time: t0})
	l, _ := s.fsm.LeaseOf("r1")
	fireNow(t, lt, s, "r1", l, &attempts)
	if n := attempts.Load(); n != 5 {
		t.Errorf("expiry attempts = %d, want 5 (4 refused, then applied)", n)
	}
	if _, held := s.fsm.LeaseOf("r1"); held {
		t.Error("the due lease is still held after its expiry was applied")
	}
	// Pauses are jittered over [d/2, d) of 20, 40, 80, 80 ms: their sum
	// is at least 110 ms, where a fixed 20 ms pause gives under 80.
	if total := at[len(at)-1].Sub(at[0]); total < 110*time.Millisecond {
		t.Errorf("4 retries took %v, want at least 110ms (the pause doubles)", total)
	}
}
