package guard

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/internal/jsonl"
	"github.com/rackfence/rackfence/shared/fence"
)

// The guard's own rules, in-process with a function standing in for the
// mutating call. agent/bmc's guard_test.go checks the guard in front of a
// BMC (bmcsim).

// fakeClock is a guard and a lease holder sharing one settable clock.
type fakeClock struct{ t atomic.Int64 }

func (c *fakeClock) now() time.Time      { return time.Unix(0, c.t.Load()) }
func (c *fakeClock) set(t time.Time)     { c.t.Store(t.UnixNano()) }
func (c *fakeClock) add(d time.Duration) { c.t.Add(int64(d)) }
func newClock(t time.Time) *fakeClock    { c := &fakeClock{}; c.set(t); return c }
func lease(epoch uint64, deadline time.Time) fence.Lease {
	return fence.Lease{Rack: "r1", Holder: "a", Epoch: epoch, TTL: 10 * time.Second, Deadline: deadline}
}

func clockGuard(start time.Time, audit Auditor) (*Guard, *fence.Holder, *fakeClock) {
	c := newClock(start)
	h := fence.NewHolder(c.now)
	g := NewGuard(h, audit)
	g.now = c.now
	return g, h, c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A call runs only when the lease covers its whole timeout; refusals never
// run fn, wrap ErrFenced and are audited with the reason.
func TestDoChecksTheLeaseAgainstTheCallTimeout(t *testing.T) {
	ctx := testCtx(t)
	mem := &MemoryAudit{}
	start := time.Unix(1_700_000_000, 0)
	g, h, clock := clockGuard(start, mem)
	ran := 0
	fn := func(context.Context) error { ran++; return nil }

	if err := g.Do(ctx, "h0", "power on", 4*time.Second, fn); !errors.Is(err, ErrFenced) {
		t.Fatalf("no lease: %v; want ErrFenced", err)
	}
	h.Set(lease(3, start.Add(3*time.Second)))
	if err := g.Do(ctx, "h0", "power on", 4*time.Second, fn); !errors.Is(err, ErrFenced) {
		t.Fatalf("lease with 3s left, call of 4s: %v; want ErrFenced", err)
	}
	if err := g.Do(ctx, "h0", "power on", 2*time.Second, fn); err != nil {
		t.Fatalf("lease with 3s left, call of 2s: %v", err)
	}
	clock.add(2 * time.Second) // 1s left
	if err := g.Do(ctx, "h0", "boot pxe", 2*time.Second, fn); !errors.Is(err, ErrFenced) {
		t.Fatalf("lease with 1s left, call of 2s: %v; want ErrFenced", err)
	}
	if ran != 1 {
		t.Fatalf("fn ran %d times; want 1 (only the covered call)", ran)
	}
	recs := mem.Records()
	want := []string{"refused: no rack lease held", "refused: rack lease (epoch 3) would expire", "ok", "refused: rack lease (epoch 3) would expire"}
	if len(recs) != len(want) {
		t.Fatalf("audit = %+v", recs)
	}
	for i, w := range want {
		if !strings.HasPrefix(recs[i].Outcome, w) || recs[i].Host != "h0" {
			t.Errorf("record %d = %+v; want outcome %q…", i, recs[i], w)
		}
	}
	if recs[2].Epoch != 3 || recs[3].Op != "boot pxe" || !recs[3].Start.Equal(start.Add(2*time.Second)) {
		t.Errorf("records %+v, %+v", recs[2], recs[3])
	}
}

// fn gets the verified epoch, and a deadline of the call's timeout from the
// check (the lease covers at least that, or the call is refused).
func TestDoBoundsTheCallAndCarriesTheEpoch(t *testing.T) {
	ctx := testCtx(t)
	h := fence.NewHolder(nil)
	g := NewGuard(h, nil)
	h.Set(lease(9, time.Now().Add(time.Hour)))
	const timeout = 5 * time.Second
	var deadline time.Time
	before := time.Now()
	err := g.Do(ctx, "h0", "op", timeout, func(ctx context.Context) error {
		if e, ok := EpochFromContext(ctx); !ok || e != 9 {
			t.Errorf("epoch in the call's context = %d, %v; want 9", e, ok)
		}
		var ok bool
		if deadline, ok = ctx.Deadline(); !ok {
			t.Error("no deadline on the guarded call")
		}
		return nil
	})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if deadline.Before(before.Add(timeout)) || deadline.After(after.Add(timeout)) {
		t.Fatalf("deadline %v after the call began; want %v", deadline.Sub(before), timeout)
	}
	if _, ok := EpochFromContext(context.Background()); ok {
		t.Fatal("an epoch in a bare context")
	}
	if e, ok := EpochFromContext(WithEpoch(context.Background(), 4)); !ok || e != 4 {
		t.Fatalf("WithEpoch/EpochFromContext = %d, %v", e, ok)
	}
}

// Losing the lease while fn runs cancels fn's context, and its error is
// reported as ErrFenced; an error with the lease still held passes through.
func TestLeaseLossDuringTheCallIsFenced(t *testing.T) {
	ctx := testCtx(t)
	mem := &MemoryAudit{}
	h := fence.NewHolder(nil)
	g := NewGuard(h, mem)
	h.Set(lease(5, time.Now().Add(time.Hour)))

	boom := errors.New("bmc said no")
	if err := g.Do(ctx, "h0", "op", time.Minute, func(context.Context) error { return boom }); !errors.Is(err, boom) || errors.Is(err, ErrFenced) {
		t.Fatalf("failing call under a held lease: %v; want the call's own error", err)
	}

	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- g.Do(ctx, "h0", "power off", time.Minute, func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	<-started
	h.Clear()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		t.Fatal("the call was not cancelled when the lease was cleared")
	}
	if !errors.Is(err, ErrFenced) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "lease (epoch 5) lost during the call") {
		t.Fatalf("call cut by lease loss: %v; want ErrFenced wrapping the cancellation", err)
	}
	recs := mem.Records()
	if len(recs) != 2 || recs[0].Outcome != "error: bmc said no" || !strings.HasPrefix(recs[1].Outcome, "error: fenced: power off h0: lease (epoch 5) lost") {
		t.Fatalf("audit = %+v", recs)
	}
}

// Block returns only after the host's in-flight call finished, and refuses
// every later one until Unblock. Other hosts are not affected.
func TestBlockWaitsForInFlightCalls(t *testing.T) {
	ctx := testCtx(t)
	h := fence.NewHolder(nil)
	g := NewGuard(h, nil)
	h.Set(lease(1, time.Now().Add(time.Hour)))

	started, release := make(chan struct{}), make(chan struct{})
	var callDone atomic.Bool
	callErr := make(chan error, 1)
	go func() {
		callErr <- g.Do(ctx, "h0", "slow", time.Minute, func(context.Context) error {
			close(started)
			<-release
			callDone.Store(true)
			return nil
		})
	}()
	<-started
	blockDone := make(chan bool, 1)
	go func() {
		g.Block("h0")
		blockDone <- callDone.Load()
	}()
	// Release the call only once Block has marked the host: Block must then
	// still be waiting for the call.
	for !g.Blocked("h0") {
		select {
		case <-ctx.Done():
			t.Fatal("Block never marked the host")
		case <-time.After(time.Millisecond):
		}
	}
	close(release)
	if sawDone := <-blockDone; !sawDone {
		t.Fatal("Block returned while a call on the host was still in flight")
	}
	if err := <-callErr; err != nil {
		t.Fatalf("the in-flight call: %v", err)
	}

	noop := func(context.Context) error { return nil }
	if err := g.Do(ctx, "h0", "op", time.Second, noop); !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), "blocked") {
		t.Fatalf("call on a blocked host: %v; want ErrFenced", err)
	}
	if err := g.Do(ctx, "h1", "op", time.Second, noop); err != nil {
		t.Fatalf("call on another host: %v", err)
	}
	g.Unblock("h0")
	if g.Blocked("h0") {
		t.Fatal("still blocked after Unblock")
	}
	if err := g.Do(ctx, "h0", "op", time.Second, noop); err != nil {
		t.Fatalf("call after Unblock: %v", err)
	}
}

func TestNilGuardRefuses(t *testing.T) {
	var g *Guard
	ran := false
	err := g.Do(testCtx(t), "h0", "power on", time.Second, func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, ErrFenced) || ran {
		t.Fatalf("nil guard: %v (ran %v); want ErrFenced and no call", err, ran)
	}
	if err := NewGuard(nil, nil).Do(testCtx(t), "h0", "op", time.Second, func(context.Context) error { ran = true; return nil }); !errors.Is(err, ErrFenced) || ran {
		t.Fatalf("guard without a holder: %v (ran %v)", err, ran)
	}
}

// FileAudit writes one JSON line per guarded call, run or refused, readable
// back as AuditRecords; after Close records are dropped without an error.
func TestFileAuditWritesOneLinePerCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "guard-audit.jsonl")
	fa, err := NewFileAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	mem := &MemoryAudit{}
	start := time.Unix(1_700_000_000, 0)
	g, h, _ := clockGuard(start, MultiAudit{fa, mem})
	ctx := testCtx(t)
	noop := func(context.Context) error { return nil }
	_ = g.Do(ctx, "h0", "power on", time.Second, noop) // refused: no lease
	h.Set(lease(2, start.Add(time.Minute)))
	if err := g.Do(ctx, "h1", "boot pxe", time.Second, noop); err != nil {
		t.Fatal(err)
	}
	if err := fa.Close(); err != nil {
		t.Fatal(err)
	}
	_ = g.Do(ctx, "h2", "op", time.Second, noop) // after Close: only in memory

	recs, err := jsonl.Read[AuditRecord](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Host != "h0" || !strings.HasPrefix(recs[0].Outcome, "refused: ") ||
		recs[1].Host != "h1" || recs[1].Op != "boot pxe" || recs[1].Epoch != 2 || recs[1].Outcome != "ok" || !recs[1].Start.Equal(start) {
		t.Fatalf("file audit = %+v", recs)
	}
	if fa.Errors() != 0 {
		t.Fatalf("write errors = %d", fa.Errors())
	}
	if m := mem.Records(); len(m) != 3 || m[2].Host != "h2" {
		t.Fatalf("memory audit (fan-out) = %+v", m)
	}
	if _, err := NewFileAudit(filepath.Join(t.TempDir(), "no-such-dir", "a.jsonl")); err == nil {
		t.Fatal("NewFileAudit in a missing directory succeeded")
	}
}
