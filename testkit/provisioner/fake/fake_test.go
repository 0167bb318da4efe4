package fake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/provisioner/fake"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func setup(t *testing.T) (*fence.Holder, *guard.Guard, *fake.Provisioner, context.Context) {
	t.Helper()
	h := fence.NewHolder(nil)
	g := guard.NewGuard(h, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return h, g, fake.New(fake.Config{Guard: g, MutationTimeout: time.Second}), ctx
}

func hold(h *fence.Holder, epoch uint64) {
	h.Set(fence.Lease{Rack: "r", Holder: "a", Epoch: epoch, TTL: 10 * time.Second, Deadline: time.Now().Add(9 * time.Second)})
}

var h1 = provisioner.Host{Name: "h1", BootMACAddress: "AA:BB:CC:00:00:01"}

// TestGuardedAndRecorded: without a lease every mutating call is refused by
// the guard and never reaches the fake's state; with one it runs and is
// recorded with the guard's epoch; the power read is not guarded.
func TestGuardedAndRecorded(t *testing.T) {
	h, _, p, ctx := setup(t)
	if _, err := p.SetPower(ctx, h1, true); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("power on without a lease: %v, want ErrFenced", err)
	}
	if p.Power("h1") {
		t.Fatal("a refused power-on changed the power")
	}
	if res, err := p.PowerState(ctx, h1); err != nil || res.PoweredOn == nil || *res.PoweredOn {
		t.Fatalf("power read without a lease: %+v, %v", res, err)
	}
	hold(h, 7)
	if res, err := p.SetPower(ctx, h1, true); err != nil || !*res.PoweredOn || !p.Power("h1") {
		t.Fatalf("power on under a lease: %+v, %v", res, err)
	}
	calls := p.Calls()
	want := []fake.Call{
		{Seq: 1, Host: "h1", Op: fake.OpPowerOn, Refused: true},
		{Seq: 2, Host: "h1", Op: fake.OpPowerState},
		{Seq: 3, Host: "h1", Op: fake.OpPowerOn, Epoch: 7},
	}
	if len(calls) != len(want) {
		t.Fatalf("calls %v", calls)
	}
	for i, w := range want {
		c := calls[i]
		if c.Seq != w.Seq || c.Host != w.Host || c.Op != w.Op || c.Refused != w.Refused || c.Epoch != w.Epoch || (c.Err != nil) != w.Refused {
			t.Errorf("call %d = %v, want %v", i, c, w)
		}
	}
}

// TestFaults: Fail answers the error class n times, InProgress n times,
// then the operation works.
func TestFaults(t *testing.T) {
	h, _, p, ctx := setup(t)
	hold(h, 1)
	p.Fail("h1", fake.OpRegister, 2, errclass.ErrAuth)
	for i := 0; i < 2; i++ {
		if _, err := p.Register(ctx, h1); !errors.Is(err, errclass.ErrAuth) {
			t.Fatalf("register %d: %v, want ErrAuth", i, err)
		}
	}
	if res, err := p.Register(ctx, h1); err != nil || res.ProvisioningID == "" {
		t.Fatalf("register after the faults: %+v, %v", res, err)
	}
	p.InProgress("h1", fake.OpProvision, 1)
	if res, err := p.Provision(ctx, h1); err != nil || !res.InProgress || p.Power("h1") {
		t.Fatalf("provision in progress: %+v, %v, power %v", res, err, p.Power("h1"))
	}
	if res, err := p.Provision(ctx, h1); err != nil || res.InProgress || !p.Power("h1") {
		t.Fatalf("provision: %+v, %v", res, err)
	}
	p.Fail("h1", fake.OpInspect, -1, errclass.ErrTransient)
	for i := 0; i < 3; i++ {
		if _, err := p.Inspect(ctx, h1); !errors.Is(err, errclass.ErrTransient) {
			t.Fatalf("inspect %d: %v", i, err)
		}
	}
	p.Clear("h1", fake.OpInspect)
	if res, err := p.Inspect(ctx, h1); err != nil || res.HardwareDetails == nil || res.HardwareDetails.NICs[0].MAC != "aa:bb:cc:00:00:01" {
		t.Fatalf("inspect after Clear: %+v, %v", res, err)
	}
}

// TestHoldBlockAndFence: a held call is in flight for the guard, so Block
// waits for it; once blocked, the next call is refused. Losing the lease
// cancels a held call, which returns ErrFenced.
func TestHoldBlockAndFence(t *testing.T) {
	h, g, p, ctx := setup(t)
	hold(h, 3)
	gate := p.Hold("h1", fake.OpPowerOn)
	go p.SetPower(ctx, h1, true)
	<-gate.Entered()
	blocked := make(chan struct{})
	go func() { g.Block("h1"); close(blocked) }()
	testenv.Eventually(t, 10*time.Second, "the guard blocking h1", func() error {
		if !g.Blocked("h1") {
			return errors.New("not blocked yet")
		}
		return nil
	})
	// Blocked: the next call is refused, while Block still waits for the
	// held one.
	if _, err := p.SetPower(ctx, h1, false); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("power off of a blocked host: %v, want ErrFenced", err)
	}
	select {
	case <-blocked:
		t.Fatal("Block returned while the held call was in flight")
	default:
	}
	gate.Release()
	<-blocked
	if c := gate.Call(); c.Err != nil || c.Epoch != 3 || !p.Power("h1") {
		t.Fatalf("held call: %v", c)
	}
	g.Unblock("h1")

	gate = p.Hold("h1", fake.OpPowerOff)
	errc := make(chan error, 1)
	go func() { _, err := p.SetPower(ctx, h1, false); errc <- err }()
	<-gate.Entered()
	h.Clear()
	if err := <-errc; !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("held call when the lease is cleared: %v, want ErrFenced", err)
	}
	if !p.Power("h1") {
		t.Fatal("a call cancelled by the lease loss changed the power")
	}
	// Wait finds the earliest match after seq.
	first, err := p.Wait(ctx, 0, fake.Is("h1", fake.OpPowerOff))
	if err != nil || !first.Refused {
		t.Fatalf("Wait from 0: %v %v, want the refused power-off", first, err)
	}
	if c, err := p.Wait(ctx, first.Seq, fake.Is("h1", fake.OpPowerOff)); err != nil || c.Refused || !errors.Is(c.Err, guard.ErrFenced) {
		t.Fatalf("Wait after #%d: %v %v, want the cancelled power-off", first.Seq, c, err)
	}
}
