package agent

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/provisioner/fake"
)

// TestInProcessWatchResetDropsMissingHosts: a watch answer that is a reset
// (the agent asked from an index older than the coordinator keeps
// deletions for) drops every host it does not list. The next change of a
// dropped host brings it back as a host seen for the first time in the
// session: its status is the coordinator's copy, so it is not registered
// again, and the change is acted on.
func TestInProcessWatchResetDropsMissingHosts(t *testing.T) {
	c, r, l := newRack(t, agentOpts{})
	availableHost(t, c, r, "x", 0)
	availableHost(t, c, r, "y", 1)

	// The reset is answered to the next watch request; a change of y ends
	// the one in flight.
	r.coord.resetWithoutNext("x")
	y := c.Host("y")
	y.Labels = map[string]string{"poke": "1"}
	c.Apply(y)
	r.seenGone("x")
	if !r.a.cur.Load().store.with("y", func(*hostEntry) {}) {
		t.Fatal("the reset dropped y, which it listed")
	}

	with, _ := r.coord.watchCounts()
	x := c.Host("x")
	x.Online = false
	c.Apply(x)
	off, err := r.prov.Wait(ctxT(t), 0, fake.OK("x", fake.OpPowerOff))
	if err != nil {
		t.Fatal(err)
	}
	if off.Epoch != l.Epoch {
		t.Fatalf("x powered off under epoch %d, want %d", off.Epoch, l.Epoch)
	}
	if registers := countOps(r.prov.CallsOf("x"), fake.OpRegister); registers != 1 {
		t.Fatalf("x registered %d times, want once (back after the reset with the coordinator's status): %v", registers, r.prov.CallsOf("x"))
	}
	c.WaitHost("x", waitLong, "available under the same epoch", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		return epochIs(l.Epoch)(h)
	})
	// x came back in an answer asked without statuses, which named it as
	// left out: the agent asked again with statuses.
	if again, without := r.coord.watchCounts(); again != with+1 || without == 0 {
		t.Fatalf("watches with statuses %d → %d (want one more: x asked again), without %d", with, again, without)
	}
}

// TestInProcessWatchNewHostsCostNoStatusFetch: after its first answer the
// agent asks without statuses; hosts created meanwhile (no status yet, as
// an operator creates them) are taken from those answers and brought to
// available without asking again with statuses.
func TestInProcessWatchNewHostsCostNoStatusFetch(t *testing.T) {
	c, r, _ := newRack(t, agentOpts{})
	first, _ := r.coord.watchCounts()
	for i, n := range []string{"x", "y", "z"} {
		availableHost(t, c, r, n, i)
	}
	with, without := r.coord.watchCounts()
	if with != first || without == 0 {
		t.Fatalf("watches with statuses %d → %d (want no more after the first), without %d", first, with, without)
	}
	for _, n := range []string{"x", "y", "z"} {
		if registers := countOps(r.prov.CallsOf(n), fake.OpRegister); registers != 1 {
			t.Fatalf("%s registered %d times: %v", n, registers, r.prov.CallsOf(n))
		}
	}
}

// TestInProcessWatchOlderCoordinator: a coordinator that ignores
// status=false answers whole hosts and names none as left out. The agent
// works as before: a host back after a reset takes the coordinator's
// status (no re-registration) from that answer, without asking again.
func TestInProcessWatchOlderCoordinator(t *testing.T) {
	c, r, l := newRack(t, agentOpts{})
	r.coord.ignoreStatusParam()
	availableHost(t, c, r, "x", 0)
	availableHost(t, c, r, "y", 1)

	r.coord.resetWithoutNext("x")
	y := c.Host("y")
	y.Labels = map[string]string{"poke": "1"}
	c.Apply(y)
	r.seenGone("x")
	with, _ := r.coord.watchCounts()

	x := c.Host("x")
	x.Online = false
	c.Apply(x)
	if _, err := r.prov.Wait(ctxT(t), 0, fake.OK("x", fake.OpPowerOff)); err != nil {
		t.Fatal(err)
	}
	if registers := countOps(r.prov.CallsOf("x"), fake.OpRegister); registers != 1 {
		t.Fatalf("x registered %d times, want once: %v", registers, r.prov.CallsOf("x"))
	}
	c.WaitHost("x", waitLong, "available under the same epoch", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		return epochIs(l.Epoch)(h)
	})
	if again, _ := r.coord.watchCounts(); again != with {
		t.Fatalf("watches with statuses %d → %d: asked again though the answer was whole", with, again)
	}
}
