package agent

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/provisioner/fake"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// In-process tests of the lease keeper and of what losing the lease does to
// the session (inproc_test.go says what runs).

// availableHost applies a managed host and waits until r made it
// available and powered it on.
func availableHost(t *testing.T, c *coordtest.Coordinator, r *rackAgent, name string, i int) {
	t.Helper()
	c.Apply(fakeHost(name, "r1", i))
	c.WaitHost(name, waitLong, "available", stateIs(wire.StateAvailable, wire.OpOK))
	if _, err := r.prov.Wait(ctxT(t), 0, fake.OK(name, fake.OpPowerOn)); err != nil {
		t.Fatal(err)
	}
}

// holdPowerOff turns name's spec offline and returns once the resulting
// power-off is held in flight.
func holdPowerOff(t *testing.T, c *coordtest.Coordinator, r *rackAgent, name string) *fake.Gate {
	t.Helper()
	gate := r.prov.Hold(name, fake.OpPowerOff)
	h := c.Host(name)
	h.Online = false
	c.Apply(h)
	select {
	case <-gate.Entered():
	case <-ctxT(t).Done():
		t.Fatalf("the power-off of %s never started: %v", name, r.prov.CallsOf(name))
	}
	return gate
}

// TestInProcessLeaseExpiryFencesAndStandbyTakesOver: when the holder is cut
// off from the coordinator, its lease runs out on its own clock: it stops mutating
// (the guard answers ErrFenced) and drops its session; the coordinator
// expires the lease and the standby takes the rack over under a higher
// epoch. On the BMCs both share, no mutation of the old holder overlaps
// one of the new.
func TestInProcessLeaseExpiryFencesAndStandbyTakesOver(t *testing.T) {
	t.Parallel()
	c := coordtest.Start(t, coordtest.Options{})
	// A 3 s lease: a takeover within about 4 s of the last renewal.
	o := agentOpts{ttl: 3 * time.Second}
	a := startAgent(t, c, "r1", "a", o)
	la := a.waitHeld()
	o.share = a.prov
	b := startAgent(t, c, "r1", "b", o)
	b.waitStandby()
	availableHost(t, c, a, "h0", 0)

	// a is cut off from the coordinator: its renewals fail.
	a.coord.cutOff(true)
	testenv.Eventually(t, waitLong, "a dropping its lease", func() error {
		if l, ok := a.holder.Valid(0); ok || a.a.cur.Load() != nil {
			return fmt.Errorf("a still holds %+v (session %v)", l, a.a.cur.Load() != nil)
		}
		return nil
	})
	if _, err := a.prov.SetPower(ctxT(t), provisioner.Host{Name: "h0"}, false); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("a mutation through a's guard after its lease ran out: %v, want ErrFenced", err)
	}

	lb := b.waitHeld()
	if lb.Epoch <= la.Epoch {
		t.Fatalf("b took over under epoch %d, a held %d", lb.Epoch, la.Epoch)
	}
	hist, err := c.Admin.LeaseHistory(ctxT(t), "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range hist.Items {
		if rec.Epoch == la.Epoch && rec.End != "expired" {
			t.Errorf("a's lease ended %q, want expired: %+v", rec.End, hist.Items)
		}
	}
	c.WaitHost("h0", waitLong, "written under b's epoch", epochIs(lb.Epoch))
	h := c.Host("h0")
	h.Online = false
	c.Apply(h)
	off, err := b.prov.Wait(ctxT(t), 0, func(c fake.Call) bool {
		return c.Agent == "b" && c.Host == "h0" && c.Op == fake.OpPowerOff && c.Err == nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if off.Epoch != lb.Epoch {
		t.Fatalf("b powered h0 off under epoch %d, holds %d", off.Epoch, lb.Epoch)
	}
	if failed, _ := a.coord.renewals(); failed == 0 {
		t.Fatal("no renewal of a failed")
	}

	// Fencing: a's last mutation ended before b's first began.
	var aEnd, bStart time.Time
	for _, call := range a.prov.Calls() {
		if call.Refused || !call.Op.Mutating() {
			continue
		}
		switch call.Agent {
		case "a":
			if call.Epoch != la.Epoch {
				t.Errorf("a: %v, want epoch %d", call, la.Epoch)
			}
			if call.End.After(aEnd) {
				aEnd = call.End
			}
		case "b":
			if call.Epoch != lb.Epoch {
				t.Errorf("b: %v, want epoch %d", call, lb.Epoch)
			}
			if bStart.IsZero() || call.Start.Before(bStart) {
				bStart = call.Start
			}
		}
	}
	if !aEnd.Before(bStart) {
		t.Fatalf("a's mutations ended at %s, after b's began at %s: %v", aEnd, bStart, a.prov.Calls())
	}
	// Back in touch, a stands by.
	a.coord.cutOff(false)
	a.waitStandby()
}

// TestInProcessRenewRefusedCancelsInFlightCall: a renewal the coordinator
// refuses as stale ends the session at once, long before the lease's own
// deadline: the call in flight is cancelled and answers ErrFenced. The
// agent acquires the rack again under a new epoch, writes every host's
// status under it and redoes the interrupted work under it.
func TestInProcessRenewRefusedCancelsInFlightCall(t *testing.T) {
	c, r, l1 := newRack(t, agentOpts{})
	availableHost(t, c, r, "h0", 0)
	gate := holdPowerOff(t, c, r, "h0")

	r.coord.failRenewals(errStale)
	r.a.keeper.renewNow()
	held := gate.Call()
	if !errors.Is(held.Err, guard.ErrFenced) || held.Epoch != l1.Epoch {
		t.Fatalf("the call in flight when the renewal was refused: %v, want ErrFenced under epoch %d", held, l1.Epoch)
	}
	if r.prov.Power("h0") != true {
		t.Fatal("the cancelled power-off changed the power")
	}

	var l2 uint64
	testenv.Eventually(t, waitLong, "a new lease", func() error {
		l, ok := r.holder.Valid(0)
		if !ok || l.Epoch == l1.Epoch {
			return fmt.Errorf("lease %+v", l)
		}
		l2 = l.Epoch
		return nil
	})
	c.WaitHost("h0", waitLong, "written under the new epoch", epochIs(l2))
	off, err := r.prov.Wait(ctxT(t), held.Seq, fake.OK("h0", fake.OpPowerOff))
	if err != nil {
		t.Fatal(err)
	}
	if off.Epoch != l2 {
		t.Fatalf("h0 powered off under epoch %d, want the new %d", off.Epoch, l2)
	}
}

// TestInProcessStaleStatusWriteEndsSession: a status write refused as stale
// ends the session (the coordinator may have given the rack away): the
// agent drops everything and starts again under a new lease.
func TestInProcessStaleStatusWriteEndsSession(t *testing.T) {
	c, r, l1 := newRack(t, agentOpts{})
	availableHost(t, c, r, "h0", 0)
	first := r.a.cur.Load()

	r.coord.refuseNextWrite("h0") // the next refresh, within a second
	var l2 uint64
	testenv.Eventually(t, waitLong, "a new session under a new lease", func() error {
		l, ok := r.holder.Valid(0)
		if !ok || l.Epoch == l1.Epoch || r.a.cur.Load() == first || r.a.cur.Load() == nil {
			return fmt.Errorf("lease %+v", l)
		}
		l2 = l.Epoch
		return nil
	})
	c.WaitHost("h0", waitLong, "written under the new epoch", epochIs(l2))
	if got := testutil.ToFloat64(r.a.cfg.Metrics.statusWrites.WithLabelValues("stale")); got != 1 {
		t.Fatalf("stale status writes counted: %v, want 1", got)
	}
}

// TestInProcessTransientRenewFailuresKeepTheLease: renewals that fail for a
// while (no member answers) are retried before the deadline; once one
// succeeds the lease and the session go on under the same epoch.
func TestInProcessTransientRenewFailuresKeepTheLease(t *testing.T) {
	_, r, l1 := newRack(t, agentOpts{ttl: 3 * time.Second})
	s := r.a.cur.Load()
	_, ok0 := r.coord.renewals()
	r.coord.failRenewals(errUnreachable, errUnreachable, errUnreachable)
	testenv.Eventually(t, waitLong, "three failed renewals, then two good ones", func() error {
		failed, ok := r.coord.renewals()
		if failed < 3 || ok < ok0+2 {
			return fmt.Errorf("%d failed, %d succeeded since", failed, ok-ok0)
		}
		return nil
	})
	if l, ok := r.holder.Valid(0); !ok || l.Epoch != l1.Epoch || r.a.cur.Load() != s {
		t.Fatalf("after transient renewal failures: lease %+v valid=%v, same session %v; want epoch %d kept",
			l, ok, r.a.cur.Load() == s, l1.Epoch)
	}
}
