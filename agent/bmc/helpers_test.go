package bmc

import (
	"context"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// startSim starts an in-process bmcsim with n BMCs, closed on cleanup.
func startSim(t testing.TB, cfg bmcsim.Config) *bmcsim.Sim {
	t.Helper()
	s, err := bmcsim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// leasedGuard returns a guard over a lease of epoch 7 valid for ttl.
func leasedGuard(ttl time.Duration, audit guard.Auditor) (*guard.Guard, *fence.Holder) {
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Holder: "agent-test", Epoch: 7, TTL: ttl, Deadline: time.Now().Add(ttl)})
	return guard.NewGuard(h, audit), h
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
