package agent

import (
	"testing"

	"github.com/rackfence/rackfence/agent/provisioner/fake"
	"github.com/rackfence/rackfence/shared/wire"
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
}
