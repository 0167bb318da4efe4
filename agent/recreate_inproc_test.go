package agent

import (
	"errors"
	"testing"

	"github.com/rackfence/rackfence/agent/provisioner/fake"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestInProcessRecreatedHostStartsAfresh: a host deleted and created again
// under the same name, both in one watch answer, is a new host to the
// agent: the old one's state machine ends and the new one starts from
// registration. The agent's removal of the old host is applied by the
// coordinator, and the agent learns of it late, so it still holds the old
// host (deleting) when the answer naming the new one, and no deletion,
// arrives:
//   - answer lost: the removal's answer is lost (and its retries fail
//     until the agent has taken the answer): the agent must not write
//     the old host's removal again, to the new host;
//   - answer late: the removal's answer comes after the watch answer: the
//     agent must not drop the new host when it forgets the old one.
func TestInProcessRecreatedHostStartsAfresh(t *testing.T) {
	for _, c := range []struct {
		name string
		lose bool
	}{{"answer lost", true}, {"answer late", false}} {
		t.Run(c.name, func(t *testing.T) { testRecreatedHost(t, c.lose) })
	}
}

func testRecreatedHost(t *testing.T, lose bool) {
	c, r, _ := newRack(t, agentOpts{})
	availableHost(t, c, r, "x", 0)
	old := c.Host("x")

	releaseWatch, releaseWrites := r.coord.holdRemoveOf("x", lose)
	defer releaseWatch()
	defer releaseWrites()
	ctx := ctxT(t)
	if _, err := c.Admin.DeleteHost(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, waitLong, "x removed by the agent", func() error {
		_, err := c.Admin.GetHost(ctx, "x")
		if client.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return errors.New("still there")
	})
	c.Apply(fakeHost("x", "r1", 5))
	created := c.Host("x").CreatedIndex
	if created == old.CreatedIndex {
		t.Fatalf("the new x has the old one's createdIndex %d", created)
	}
	releaseWatch()

	r.seen("x", "as the new host", func(h wire.Host) bool { return h.CreatedIndex == created })
	r.a.cur.Load().store.with("x", func(e *hostEntry) {
		if e.pendingRemove || (e.status != nil && e.status.ProvisioningState == wire.StateDeleting) {
			t.Errorf("the agent's x is the old host's state: pending removal %v, status %+v", e.pendingRemove, e.status)
		}
	})
	releaseWrites()
	c.WaitHost("x", waitLong, "available as the new host", func(h *wire.Host) error {
		if h.CreatedIndex != created {
			return errors.New("another host")
		}
		return stateIs(wire.StateAvailable, wire.OpOK)(h)
	})
	if registers := countOps(r.prov.CallsOf("x"), fake.OpRegister); registers != 2 {
		t.Fatalf("x registered %d times, want twice (the old host, then the new): %v", registers, r.prov.CallsOf("x"))
	}
}
