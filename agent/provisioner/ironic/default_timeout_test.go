package ironic

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/fence"
)

// A Config left at its defaults (no Timeout, no MutationTimeout) must not
// have its mutations refused by the guard under a default lease late in
// its renewal cycle: the guard demands MutationTimeout of room on the
// lease, and the default is the fence's. A stub Ironic, because the fault
// is in what reaches Ironic at all: a real one would only answer the PATCH.
func TestDefaultConfigMutatesUnderDefaultLease(t *testing.T) {
	var patches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1" || r.URL.Path == "/v1/":
			w.Write([]byte(`{"id":"v1","version":{"id":"v1","status":"CURRENT","min_version":"1.1","version":"1.82"}}`))
		case r.Method == http.MethodPatch && r.URL.Path == "/v1/nodes/n1":
			patches.Add(1)
			w.Write([]byte(`{"uuid":"n1","name":"h0"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)

	ttl := fence.DefaultTTL
	h := fence.NewHolder(nil)
	// The worst point of the renewal cycle: the last renewal was sent
	// TTL/3 ago and the next one has not been answered yet.
	sent := time.Now().Add(-ttl / 3)
	h.Set(fence.Lease{Rack: "r1", Holder: "a", Epoch: 1, TTL: ttl, Deadline: fence.HolderDeadline(sent, ttl)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := New(ctx, Config{URL: srv.URL, Guard: guard.NewGuard(h, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if p.cfg.MutationTimeout != fence.DefaultMutationTimeout {
		t.Errorf("default MutationTimeout = %s, want the fence's %s", p.cfg.MutationTimeout, fence.DefaultMutationTimeout)
	}
	err = p.updateNode(ctx, provisioner.Host{Name: "h0"}, "n1", "test update",
		nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/name", Value: "h0"}})
	if errors.Is(err, guard.ErrFenced) {
		t.Fatalf("a default Config's mutation under a default lease was refused by the guard: %v", err)
	}
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if patches.Load() != 1 {
		t.Fatalf("Ironic saw %d PATCHes, want 1", patches.Load())
	}
}
