package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestInProcessTakeoverTouchesUnchangedHosts: an agent taking a rack over
// (here after the holder released it) stamps every host whose status its
// state machine leaves as the coordinator holds it with a touch under the
// new epoch, at once, not with a full write: the status carries the new
// epoch, its modifiedIndex does not move (no watcher is woken) and no full
// status goes out. The refresh is an hour, so no periodic touch can stand
// in for the takeover's.
func TestInProcessTakeoverTouchesUnchangedHosts(t *testing.T) {
	t.Parallel()
	const hosts = 10
	c := coordtest.Start(t, coordtest.Options{})
	o := agentOpts{refresh: time.Hour}
	a := startAgent(t, c, "r1", "a", o)
	a.waitHeld()
	names := make([]string, hosts)
	for i := range names {
		names[i] = fmt.Sprintf("t%02d", i)
		c.Apply(fakeHost(names[i], "r1", i))
	}
	for _, n := range names {
		c.WaitHost(n, waitLong, "available", stateIs(wire.StateAvailable, wire.OpOK))
	}
	// What a wrote last is what the coordinator holds.
	settled := func() error {
		for _, n := range names {
			if w, h := a.coord.written(n), c.Host(n); len(w) == 0 || !sameStatus(&w[len(w)-1].Status, h.Status) {
				return fmt.Errorf("%s: the coordinator's status is not a's last write yet", n)
			}
		}
		return nil
	}
	testenv.Eventually(t, waitLong, "every host settled", settled)
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	// The indexes before the takeover are read once a has stopped: a
	// write of a's still in flight at the check above (CI saw two hosts
	// move by 2) is not the takeover's.
	if err := settled(); err != nil {
		t.Fatal(err)
	}
	before := map[string]uint64{}
	for _, n := range names {
		before[n] = c.Host(n).ModifiedIndex
	}
	o.share = a.prov
	b := startAgent(t, c, "r1", "b", o)
	lb := b.waitHeld()
	for _, n := range names {
		c.WaitHost(n, waitLong, "stamped with b's epoch", epochIs(lb.Epoch))
	}
	for _, n := range names {
		h := c.Host(n)
		if h.ModifiedIndex != before[n] {
			t.Errorf("%s: modifiedIndex %d → %d at the takeover: want a touch, which leaves it", n, before[n], h.ModifiedIndex)
		}
		if _, touches := b.coord.rackCounts(n); touches != 1 {
			t.Errorf("%s: %d touches by b, want 1", n, touches)
		}
		if w := b.coord.written(n); len(w) != 0 {
			t.Errorf("%s: %d full status writes by b, want none: %+v", n, len(w), w)
		}
	}
}

// TestInProcessTakeoverTouchRefusedWritesInFull: when the host changed on
// the coordinator between the watch answer the new session started from
// and its touch (here its labels, which the state machine ignores), the
// touch is refused and the status goes out in full once, under the new
// epoch, without waiting for a refresh.
func TestInProcessTakeoverTouchRefusedWritesInFull(t *testing.T) {
	t.Parallel()
	c := coordtest.Start(t, coordtest.Options{})
	o := agentOpts{refresh: time.Hour}
	a := startAgent(t, c, "r1", "a", o)
	a.waitHeld()
	o.share = a.prov
	b := startAgent(t, c, "r1", "b", o)
	b.waitStandby()
	availableHost(t, c, a, "h0", 0)
	entered, releaseWrite, releaseWatch := b.coord.holdTouchOf("h0")
	defer releaseWatch()
	defer releaseWrite()
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(waitLong):
		t.Fatal("b sent no touch of h0 after taking the rack over")
	}
	h := c.Host("h0")
	h.Labels = map[string]string{"moved": "yes"}
	c.Apply(h)
	moved := c.Host("h0").ModifiedIndex
	releaseWrite()
	lb := b.waitHeld()
	c.WaitHost("h0", waitLong, "written in full under b's epoch", func(h *wire.Host) error {
		if err := epochIs(lb.Epoch)(h); err != nil {
			return err
		}
		if h.ModifiedIndex <= moved {
			return fmt.Errorf("modifiedIndex %d, want past %d (a full write)", h.ModifiedIndex, moved)
		}
		return nil
	})
	if w := b.coord.written("h0"); len(w) != 1 || w[0].Status.ProvisioningState != wire.StateAvailable {
		t.Fatalf("b's full writes of h0: %+v, want one, available", w)
	}
	if _, touches := b.coord.rackCounts("h0"); touches != 0 {
		t.Fatalf("%d touches of h0 accepted, want 0 (it was refused)", touches)
	}
}
