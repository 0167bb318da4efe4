package agent

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// In-process tests of shutdown and of a restarted agent taking its rack
// back (inproc_test.go says what runs).

// stopAsync stops r in the background; the channel answers Run's result.
func stopAsync(r *rackAgent) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- r.stop() }()
	return ch
}

// waitDraining waits until r's session stopped handing out work (shutdown
// began).
func (r *rackAgent) waitDraining() {
	r.t.Helper()
	testenv.Eventually(r.t, waitLong, r.id+" draining", func() error {
		if s := r.a.cur.Load(); s == nil || !s.stopping.Load() {
			return errors.New("not draining")
		}
		return nil
	})
}

// lastLeaseEnd returns how the rack's lease of epoch ended on the
// coordinator ("" while it lasts).
func lastLeaseEnd(t *testing.T, c *coordtest.Coordinator, rack string, epoch uint64) string {
	t.Helper()
	hist, err := c.Admin.LeaseHistory(ctxT(t), rack)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range hist.Items {
		if rec.Epoch == epoch {
			return rec.End
		}
	}
	t.Fatalf("no lease of epoch %d in %+v", epoch, hist.Items)
	return ""
}

// TestInProcessShutdown: on shutdown the agent lets the call in flight
// finish within the grace period while it still holds the lease, then
// releases the lease (a standby takes over at once, not after the TTL);
// a call still in flight when the grace passes is cancelled (ErrFenced)
// before the release.
func TestInProcessShutdown(t *testing.T) {
	t.Parallel()
	t.Run("in-flight call finishes", func(t *testing.T) {
		t.Parallel()
		c := coordtest.Start(t, coordtest.Options{})
		a := startAgent(t, c, "r1", "a", agentOpts{})
		la := a.waitHeld()
		b := startAgent(t, c, "r1", "b", agentOpts{share: a.prov})
		b.waitStandby()
		availableHost(t, c, a, "h0", 0)
		gate := holdPowerOff(t, c, a, "h0")

		stopped := stopAsync(a)
		a.waitDraining()
		if l, ok := a.holder.Valid(0); !ok || l.Epoch != la.Epoch {
			t.Fatalf("draining without the lease: %+v", l)
		}
		gate.Release()
		if held := gate.Call(); held.Err != nil || held.Epoch != la.Epoch {
			t.Fatalf("the call in flight at shutdown: %v, want it to finish under epoch %d", held, la.Epoch)
		}
		if err := <-stopped; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if _, ok := a.holder.Valid(0); ok {
			t.Fatal("a stopped still holding a valid lease")
		}
		if end := lastLeaseEnd(t, c, "r1", la.Epoch); end != "released" {
			t.Fatalf("a's lease ended %q, want released", end)
		}
		lb := b.waitHeld()
		if lb.Epoch <= la.Epoch {
			t.Fatalf("b took over under epoch %d, a held %d", lb.Epoch, la.Epoch)
		}
		c.WaitHost("h0", waitLong, "written under b's epoch", epochIs(lb.Epoch))
	})
	t.Run("grace passes", func(t *testing.T) {
		c, a, la := newRack(t, agentOpts{grace: 200 * time.Millisecond})
		availableHost(t, c, a, "h0", 0)
		gate := holdPowerOff(t, c, a, "h0")
		stopped := stopAsync(a)
		held := gate.Call() // never released: the grace ends it
		if !errors.Is(held.Err, guard.ErrFenced) {
			t.Fatalf("the call in flight when the grace passed: %v, want ErrFenced", held)
		}
		if err := <-stopped; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if end := lastLeaseEnd(t, c, "r1", la.Epoch); end != "released" {
			t.Fatalf("a's lease ended %q, want released", end)
		}
		if !a.prov.Power("h0") {
			t.Fatal("the abandoned power-off changed the power")
		}
	})
}

// TestInProcessRestartReconcile: an agent started on a rack whose hosts
// another agent already made available takes the coordinator's statuses
// as they are: it stamps every host once with its new epoch by a touch
// (the status and the host's modifiedIndex unchanged), refreshes the
// unchanged statuses every StatusRefresh with touches, writes no status
// in full and calls nothing that changes a host.
func TestInProcessRestartReconcile(t *testing.T) {
	c, a, la := newRack(t, agentOpts{})
	hosts := []string{"h0", "h1", "h2"}
	for i, n := range hosts {
		availableHost(t, c, a, n, i)
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	before := map[string]wire.Host{}
	for _, n := range hosts {
		before[n] = *c.Host(n)
	}

	// The same BMCs (the fake's back end), a new agent.
	a2 := startAgent(t, c, "r1", "a2", agentOpts{share: a.prov})
	l2 := a2.waitHeld()
	if l2.Epoch <= la.Epoch {
		t.Fatalf("new epoch %d, old %d", l2.Epoch, la.Epoch)
	}
	for _, n := range hosts {
		c.WaitHost(n, waitLong, "stamped with the new epoch", epochIs(l2.Epoch))
	}
	// Two touches of each: the takeover and a refresh; the first
	// reconcile's action, had it decided one, ran before the second.
	testenv.Eventually(t, waitLong, "every status refreshed", func() error {
		for _, n := range hosts {
			if _, touches := a2.coord.rackCounts(n); touches < 2 {
				return fmt.Errorf("%s touched %d times", n, touches)
			}
		}
		return nil
	})
	for _, n := range hosts {
		h, b := c.Host(n), before[n]
		if w := a2.coord.written(n); len(w) != 0 {
			t.Errorf("%s: %d full status writes, want touches only: %+v", n, len(w), w)
		}
		if h.ModifiedIndex != b.ModifiedIndex || !sameStatus(h.Status, b.Status) || h.Status.ProvisioningState != wire.StateAvailable {
			t.Errorf("%s: the takeover changed the host: index %d → %d, status %+v → %+v", n, b.ModifiedIndex, h.ModifiedIndex, b.Status, h.Status)
		}
	}
	for _, call := range a2.prov.Calls() {
		if call.Agent == "a2" && call.Op.Mutating() {
			t.Errorf("the restarted agent changed a host: %v", call)
		}
	}
}
