package agent

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/provisioner/fake"
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
		t.Run(c.name, func(t *testing.T) {
			c2, r, _ := newRack(t, agentOpts{})
			created, releaseWatch, releaseWrites := recreateHeld(t, c2, r, "x", c.lose)
			releaseWatch()

			// The agent's writes of x fail or wait until it has taken the
			// answer, so its removal (if it kept one) comes after.
			r.seen("x", "as the new host", func(h wire.Host) bool { return h.CreatedIndex == created })
			r.a.cur.Load().store.with("x", func(e *hostEntry) {
				if e.pendingRemove || (e.status != nil && e.status.ProvisioningState == wire.StateDeleting) {
					t.Errorf("the agent's x is the old host's state: pending removal %v, status %+v", e.pendingRemove, e.status)
				}
			})
			releaseWrites()
			c2.WaitHost("x", waitLong, "available as the new host", func(h *wire.Host) error {
				if h.CreatedIndex != created {
					return errors.New("another host")
				}
				return stateIs(wire.StateAvailable, wire.OpOK)(h)
			})
			if registers := countOps(r.prov.CallsOf("x"), fake.OpRegister); registers != 2 {
				t.Fatalf("x registered %d times, want twice (the old host, then the new): %v", registers, r.prov.CallsOf("x"))
			}
		})
	}
}

// TestInProcessRecreatedHostStatusAskedAgain: a host created again under a
// name the agent holds, with a status already (as a host pivoted back in
// carries one), comes in a status-less answer that names it among those
// whose status it left out: the agent asks that answer again with
// statuses and takes the new host's status, as for a host new to it.
func TestInProcessRecreatedHostStatusAskedAgain(t *testing.T) {
	c, r, l := newRack(t, agentOpts{})
	created, releaseWatch, releaseWrites := recreateHeld(t, c, r, "x", true)
	defer releaseWrites()
	// The status the new host has on the coordinator before the agent
	// sees it (written here under the agent's epoch).
	st := wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, Epoch: l.Epoch,
		HardwareDetails: &wire.HardwareDetails{SerialNumber: "SN-NEW-X"}}
	if err := c.AgentClient("r1").ReportStatus(ctxT(t), "x", wire.StatusReport{Epoch: l.Epoch, Status: st}); err != nil {
		t.Fatal(err)
	}
	with, _ := r.coord.watchCounts()
	releaseWatch()

	testenv.Eventually(t, waitLong, "the agent holding the new x with its status", func() error {
		var err error
		if !r.a.cur.Load().store.with("x", func(e *hostEntry) {
			switch {
			case e.host.CreatedIndex != created:
				err = fmt.Errorf("createdIndex %d, want %d", e.host.CreatedIndex, created)
			case e.status == nil || e.status.HardwareDetails == nil || e.status.HardwareDetails.SerialNumber != "SN-NEW-X":
				err = fmt.Errorf("status %+v, not the new host's", e.status)
			}
		}) {
			err = errors.New("x unknown")
		}
		return err
	})
	if again, _ := r.coord.watchCounts(); again <= with {
		t.Fatalf("watches with statuses %d → %d: the answer was not asked again", with, again)
	}
}

// TestInProcessWriteInFlightSkipsRecreatedHost: the agent's full status
// write of a host is in flight (held before it reaches the coordinator)
// while an operator deletes the host (it has no status yet, so it goes at
// once) and creates it again under the same name. The write names the old
// host's createdIndex, so the coordinator refuses it (not_found) and the
// new host gets nothing of the old one's status; the agent forgets the old
// host and brings the new one up from registration.
func TestInProcessWriteInFlightSkipsRecreatedHost(t *testing.T) {
	c, r, _ := newRack(t, agentOpts{})
	ctx := ctxT(t)
	entered, releaseWrite, releaseWatch, answer := r.coord.holdWriteOf("x")
	t.Cleanup(releaseWrite)
	t.Cleanup(releaseWatch)
	c.Apply(fakeHost("x", "r1", 5))
	old := c.Host("x").CreatedIndex
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("the agent never wrote the status of x")
	}
	if done, err := c.Admin.DeleteHost(ctx, "x"); err != nil || !done {
		t.Fatalf("delete x (no status yet): deleted at once %v, %v", done, err)
	}
	c.Apply(fakeHost("x", "r1", 6))
	created := c.Host("x").CreatedIndex
	if created == old {
		t.Fatalf("the new x has the old one's createdIndex %d", created)
	}
	releaseWrite()
	var res wire.RackHostResult
	select {
	case res = <-answer:
	case <-ctx.Done():
		t.Fatal("the held write of x was never answered")
	}
	if res.Error == nil || res.Error.Code != wire.CodeNotFound {
		t.Fatalf("the old x's write landed on the new x: answer %+v (error %+v)", res, res.Error)
	}
	if h := c.Host("x"); h.Status != nil {
		t.Fatalf("the new x has the old one's status: %+v", h.Status)
	}
	releaseWatch()
	c.WaitHost("x", waitLong, "available as the new host", func(h *wire.Host) error {
		if h.CreatedIndex != created {
			return errors.New("another host")
		}
		return stateIs(wire.StateAvailable, wire.OpOK)(h)
	})
}

// recreateHeld brings host (available) to be deleted and created again
// while the agent learns neither: its removal is applied by the
// coordinator but its answer lost (lose) or held, its watch answers held.
// It returns the new host's createdIndex and the releases of
// holdRemoveOf.
func recreateHeld(t *testing.T, c *coordtest.Coordinator, r *rackAgent, host string, lose bool) (created uint64, releaseWatch, releaseWrites func()) {
	t.Helper()
	availableHost(t, c, r, host, 0)
	old := c.Host(host)
	releaseWatch, releaseWrites = r.coord.holdRemoveOf(host, lose)
	t.Cleanup(releaseWatch)
	t.Cleanup(releaseWrites)
	ctx := ctxT(t)
	if _, err := c.Admin.DeleteHost(ctx, host); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, waitLong, host+" removed by the agent", func() error {
		_, err := c.Admin.GetHost(ctx, host)
		if client.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return errors.New("still there")
	})
	c.Apply(fakeHost(host, "r1", 5))
	created = c.Host(host).CreatedIndex
	if created == old.CreatedIndex {
		t.Fatalf("the new %s has the old one's createdIndex %d", host, created)
	}
	return created, releaseWatch, releaseWrites
}
