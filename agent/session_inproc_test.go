package agent

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/provisioner/fake"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// In-process tests of the session and the reconcile loop (inproc_test.go
// says what runs).

// TestInProcessHostsBecomeAvailable: the agent acquires the lease, follows
// the watch and drives new hosts through register → inspect → provide →
// power on, every call through the guard under the lease's epoch, and
// writes their status stamped with it. A host whose BMC refuses the
// credentials rests in a registration error; an operation answering
// InProgress is called again until it finishes.
func TestInProcessHostsBecomeAvailable(t *testing.T) {
	c, r, l := newRack(t, agentOpts{})
	if cl := c.Lease("r1"); cl == nil || cl.Epoch != l.Epoch || cl.Holder != "a1" {
		t.Fatalf("coordinator's lease %+v, the agent holds %+v", cl, l)
	}
	r.prov.Fail("auth", fake.OpRegister, -1, errclass.ErrAuth)
	r.prov.InProgress("slow", fake.OpProvide, 2)
	names := []string{"h0", "h1", "h2", "slow", "auth"}
	for i, n := range names {
		c.Apply(fakeHost(n, "r1", i))
	}
	for _, n := range names[:4] {
		h := c.WaitHost(n, waitLong, "available", stateIs(wire.StateAvailable, wire.OpOK))
		if h.Status.Epoch != l.Epoch || h.Status.ProvisioningID != "fake-"+n || h.Status.HardwareDetails == nil {
			t.Errorf("%s: status %+v, want epoch %d, the fake's ID and hardware details", n, h.Status, l.Epoch)
		}
		// Online: the host is powered on once available.
		if _, err := r.prov.Wait(ctxT(t), 0, fake.OK(n, fake.OpPowerOn)); err != nil {
			t.Fatalf("%s: %v; calls %v", n, err, r.prov.CallsOf(n))
		}
		var ops []fake.Op
		for _, call := range r.prov.CallsOf(n) {
			if call.Op.Mutating() && (call.Refused || call.Epoch != l.Epoch) {
				t.Errorf("%s: %v, want every guarded call let through under epoch %d", n, call, l.Epoch)
			}
			if call.Err == nil && (len(ops) == 0 || ops[len(ops)-1] != call.Op) {
				ops = append(ops, call.Op)
			}
		}
		want := []fake.Op{fake.OpRegister, fake.OpInspect, fake.OpProvide, fake.OpPowerOn}
		if fmt.Sprint(ops) != fmt.Sprint(want) {
			t.Errorf("%s: successful operations %v, want %v", n, ops, want)
		}
	}
	if provides := countOps(r.prov.CallsOf("slow"), fake.OpProvide); provides != 3 {
		t.Errorf("provide of slow called %d times, want 3 (twice in progress, then done): %v", provides, r.prov.CallsOf("slow"))
	}
	c.WaitHost("auth", waitLong, "in a registration error", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorType != wire.ErrRegistration || h.Status.ErrorCount < 1 {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	for _, call := range r.prov.CallsOf("auth") {
		if call.Op != fake.OpRegister || !errors.Is(call.Err, errclass.ErrAuth) {
			t.Errorf("auth: %v, want only failed registrations", call)
		}
	}
}

// TestInProcessDetachWaitsForInFlightCall: a detach intent that arrives
// while a mutating call of the host is in flight is acknowledged only after
// that call returned; the host is then blocked in the guard, and a spec
// change afterwards makes the agent try no call at all.
func TestInProcessDetachWaitsForInFlightCall(t *testing.T) {
	c, r, l := newRack(t, agentOpts{})
	availableHost(t, c, r, "d0", 0)
	availableHost(t, c, r, "d1", 1)

	// d0's power-off is held in flight.
	gate := holdPowerOff(t, c, r, "d0")
	if _, err := c.Admin.Detach(ctxT(t), "d0", wire.IntentRequest{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	// A later change of d1 coming through proves the watch delivered the
	// intent (answers come in index order) while d0's call is held.
	d1 := c.Host("d1")
	d1.Online = false
	c.Apply(d1)
	if _, err := r.prov.Wait(ctxT(t), 0, fake.OK("d1", fake.OpPowerOff)); err != nil {
		t.Fatal(err)
	}
	r.seen("d0", "with its detach intent", func(h wire.Host) bool { return h.Intents != nil && h.Intents.Detach != nil })
	if h := c.Host("d0"); h.Intents.Detach.Acknowledged {
		t.Fatal("the detach was acknowledged while a mutating call of d0 was in flight")
	}
	select {
	case <-gate.Done():
		t.Fatal("the held call returned before it was released")
	default:
	}

	gate.Release()
	held := gate.Call()
	if held.Err != nil || held.Refused || held.Epoch != l.Epoch {
		t.Fatalf("the held call: %v, want it to finish under epoch %d", held, l.Epoch)
	}
	h := c.WaitHost("d0", waitLong, "detach acknowledged", func(h *wire.Host) error {
		if h.Intents == nil || h.Intents.Detach == nil || !h.Intents.Detach.Acknowledged {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		return nil
	})
	if h.Intents.Detach.AckEpoch != l.Epoch || h.Status.OperationalStatus != wire.OpDetached {
		t.Fatalf("ack epoch %d (want %d), status %+v", h.Intents.Detach.AckEpoch, l.Epoch, h.Status)
	}
	if !r.guard.Blocked("d0") {
		t.Fatal("d0 is acknowledged as detached but not blocked in the guard")
	}
	calls := r.prov.CallsOf("d0")
	last := calls[len(calls)-1]
	if last.Op != fake.OpDetach || last.Seq < held.Seq || last.Err != nil {
		t.Fatalf("d0's last call %v, want the detach after the held power-off #%d", last, held.Seq)
	}

	// A spec change of the detached host: the agent sees it, reconciles
	// d0 (two status refreshes later any action it decided has run), and
	// tries nothing.
	d0 := c.Host("d0")
	d0.Online = true
	d0.Image = &wire.Image{URL: "http://images.example/os.iso"}
	c.Apply(d0)
	r.seen("d0", "online again", func(h wire.Host) bool { return h.Online && h.Image != nil })
	n := len(r.coord.written("d0"))
	testenv.Eventually(t, waitLong, "d0's status refreshed twice", func() error {
		if got := len(r.coord.written("d0")); got < n+2 {
			return fmt.Errorf("%d status writes since the change", got-n)
		}
		return nil
	})
	if after := r.prov.CallsOf("d0"); len(after) != len(calls) {
		t.Fatalf("calls of the detached d0 after its acknowledgement: %v", after[len(calls):])
	}
}
