package coordtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
)

// TestAgentTokenIsScopedAndLeasesAreFenced: the fixture is a real
// coordinator: an agent token acquires its own rack's lease, a second
// holder is refused with a conflict, a status write under a stale epoch is
// refused as stale, and another rack is forbidden.
func TestAgentTokenIsScopedAndLeasesAreFenced(t *testing.T) {
	c := coordtest.Start(t, coordtest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Apply(&wire.Host{Name: "h1", Rack: "r1"})
	ag := c.AgentClient("r1")
	l, err := ag.AcquireLease(ctx, "r1", wire.LeaseRequest{Holder: "a", TTL: wire.Duration(5 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Lease("r1"); got == nil || got.Epoch != l.Epoch || got.Holder != "a" {
		t.Fatalf("coordinator's lease %+v, granted %+v", got, l)
	}
	if _, err := ag.AcquireLease(ctx, "r1", wire.LeaseRequest{Holder: "b", TTL: wire.Duration(5 * time.Second)}); !client.IsConflict(err) {
		t.Fatalf("second holder: %v, want a conflict", err)
	}
	err = ag.ReportStatus(ctx, "h1", wire.StatusReport{Epoch: l.Epoch + 1, Status: wire.HostStatus{ProvisioningState: wire.StateRegistering}})
	if !client.IsStaleEpoch(err) {
		t.Fatalf("status under a wrong epoch: %v, want stale_epoch", err)
	}
	if _, err := ag.AcquireLease(ctx, "r2", wire.LeaseRequest{Holder: "a"}); !client.IsForbidden(err) {
		t.Fatalf("lease of another rack: %v, want forbidden", err)
	}
}
