package bmc

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/internal/jsonl"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func dialSim(t *testing.T, sim *bmcsim.Sim, i int, timeout time.Duration) *Conn {
	t.Helper()
	c, err := Dial(testCtx(t), Target{Address: sim.Address(i), Username: "admin", Password: "password"},
		Options{Timeout: timeout, MutationTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// The Conn's mutations go through the guard (agent/guard): these tests check
// the pair against a BMC. The guard's own rules are tested in agent/guard.

// A mutating call after the lease's deadline is refused, never reaches the
// BMC, and is audited as refused (in the guard's file audit).
func TestGuardRefusesAfterLeaseDeadline(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	c := dialSim(t, sim, 0, 10*time.Second)
	path := filepath.Join(t.TempDir(), "guard-audit.jsonl")
	fa, err := guard.NewFileAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	h := fence.NewHolder(nil)
	g := guard.NewGuard(h, fa)
	ctx := testCtx(t)

	// Valid for the call's 10s timeout? No: only 8s left. Refused.
	h.Set(fence.Lease{Rack: "r1", Holder: "a", Epoch: 3, TTL: 10 * time.Second, Deadline: time.Now().Add(8 * time.Second)})
	err = c.SetPower(ctx, g, "h0", true)
	if !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("call needing more time than the lease has: %v; want ErrFenced", err)
	}
	// Past the deadline: refused.
	h.Set(fence.Lease{Rack: "r1", Holder: "a", Epoch: 3, TTL: 10 * time.Second, Deadline: time.Now().Add(-time.Second)})
	if err := c.SetBootDevice(ctx, g, "h0", "pxe", false); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("call after the deadline: %v; want ErrFenced", err)
	}
	// A longer lease lets it through.
	h.Set(fence.Lease{Rack: "r1", Holder: "a", Epoch: 3, TTL: 60 * time.Second, Deadline: time.Now().Add(60 * time.Second)})
	if err := c.SetPower(ctx, g, "h0", true); err != nil {
		t.Fatalf("call within the lease: %v", err)
	}
	if err := fa.Close(); err != nil {
		t.Fatal(err)
	}
	if st := sim.State(0); st.Mutations != 1 || st.Power != "On" || st.BootOverride.Target != "None" {
		t.Fatalf("BMC state %+v: refused calls must not reach it", st)
	}

	recs, err := jsonl.Read[guard.AuditRecord](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("audit has %d records: %+v", len(recs), recs)
	}
	for i, want := range []string{"refused: ", "refused: ", "ok"} {
		if !strings.HasPrefix(recs[i].Outcome, want) || recs[i].Host != "h0" || recs[i].Epoch != 3 {
			t.Fatalf("audit record %d = %+v; want outcome %q…", i, recs[i], want)
		}
	}
	if recs[0].Op != "power on" || recs[1].Op != "boot pxe" {
		t.Fatalf("audit ops: %q, %q", recs[0].Op, recs[1].Op)
	}
}

func TestGuardRefusesWithoutLeaseOrWhenBlocked(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	c := dialSim(t, sim, 0, 10*time.Second)
	ctx := testCtx(t)
	mem := &guard.MemoryAudit{}
	g := guard.NewGuard(fence.NewHolder(nil), mem)
	if err := c.InsertMedia(ctx, g, "h0", "http://x/y.iso"); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("no lease: %v", err)
	}
	if err := c.SetPower(ctx, nil, "h0", true); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("nil guard: %v", err)
	}
	g2, _ := leasedGuard(time.Minute, mem)
	g2.Block("h0")
	if err := c.resetBMC(ctx, g2, "h0"); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("blocked host: %v", err)
	}
	g2.Unblock("h0")
	if err := c.SetBootDevice(ctx, g2, "h0", "cdrom", false); err != nil {
		t.Fatalf("unblocked: %v", err)
	}
	if st := sim.State(0); st.Mutations != 1 || st.BMCResets != 0 {
		t.Fatalf("BMC state %+v", st)
	}
	recs := mem.Records()
	if len(recs) != 3 || !strings.HasPrefix(recs[0].Outcome, "refused: no rack lease") ||
		!strings.HasPrefix(recs[1].Outcome, "refused: host is blocked") || recs[2].Outcome != "ok" {
		t.Fatalf("audit = %+v", recs)
	}
}

// Losing the lease while a call hangs on the BMC cancels the call: the
// request is aborted (not left running under a lease that is gone) and the
// error is ErrFenced.
func TestLeaseLossAbortsInFlightCall(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	c := dialSim(t, sim, 0, 120*time.Second)
	g, h := leasedGuard(10*time.Minute, nil)
	if err := sim.SetFault(0, bmcsim.FaultHang); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- c.SetPower(context.Background(), g, "h0", true) }()
	testenv.WaitBlocked(t, 60*time.Second, "bmcsim.(*Sim).ServeHTTP") // the call is past the guard, its request held by the BMC
	h.Clear()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not stop within 60s of losing the lease")
	}
	if !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("call cut by lease loss: %v; want ErrFenced", err)
	}
	if time.Since(start) > 60*time.Second {
		t.Fatalf("call ran into its own 120s timeout instead of being cancelled")
	}
	_ = sim.SetFault(0, bmcsim.FaultNone)
	if sim.State(0).Power != "Off" {
		t.Fatal("the aborted power-on reached the host")
	}
}

// With the agent's default 10s lease (deadline TTL minus margin, renewed
// every TTL/3) the default MutationTimeout fits anywhere in the renewal
// cycle, and a lease about to lapse refuses.
func TestDefaultMutationTimeoutFitsDefaultLease(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	ctx := testCtx(t)
	c, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	ttl := 10 * time.Second
	h := fence.NewHolder(nil)
	g := guard.NewGuard(h, nil)
	// Worst point of the cycle: a renewal sent TTL/3 ago.
	sent := time.Now().Add(-ttl / 3)
	h.Set(fence.Lease{Rack: "r1", Holder: "a", Epoch: 1, TTL: ttl, Deadline: fence.HolderDeadline(sent, ttl)})
	if err := c.SetPower(ctx, g, "h0", true); err != nil {
		t.Fatalf("default options under a default lease late in its renewal cycle: %v", err)
	}
	h.Set(fence.Lease{Rack: "r1", Holder: "a", Epoch: 1, TTL: ttl, Deadline: time.Now().Add(2 * time.Second)})
	if err := c.SetPower(ctx, g, "h0", false); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("lease with 2s left: %v; want ErrFenced", err)
	}
}
