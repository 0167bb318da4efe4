package ironic_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
)

// Drain maintenance sets and clears Ironic's maintenance flag, with no
// power change.
func TestDrainMaintenance(t *testing.T) {
	url := needIronic(t)
	p := newProv(t, url, fakeHW)
	ctx := ctxT(t)
	h := fakeHost("maint")
	h.ProvisioningID = must(t, "register")(p.Register(ctx, h)).ProvisioningID
	must(t, "adopt")(p.Adopt(ctx, h))
	before := wantState(t, url, h.ProvisioningID, "active").PowerState

	must(t, "maintenance on")(p.SetMaintenance(ctx, h, true))
	n := wantState(t, url, h.ProvisioningID, "active")
	if !n.Maintenance || !strings.Contains(n.MaintenanceReason, "drain") {
		t.Fatalf("maintenance %v (%q), want on with a drain reason", n.Maintenance, n.MaintenanceReason)
	}
	must(t, "maintenance on again")(p.SetMaintenance(ctx, h, true))
	must(t, "maintenance off")(p.SetMaintenance(ctx, h, false))
	n = wantState(t, url, h.ProvisioningID, "active")
	if n.Maintenance {
		t.Fatal("maintenance still on after SetMaintenance(false)")
	}
	if n.PowerState != before {
		t.Fatalf("power changed: %q → %q", before, n.PowerState)
	}
	must(t, "delete")(p.Delete(ctx, h))
}

// Detach: maintenance on, then delete — never deprovision; attach
// re-registers and re-adopts to active.
func TestDetachAndReattachFakeHardware(t *testing.T) {
	url := needIronic(t)
	rec := &recorder{ops: make(chan guard.AuditRecord, 100)}
	p := newProv(t, url, func(c *ironic.Config) { fakeHW(c); c.Guard = newGuard(rec) })
	ctx := ctxT(t)
	h := fakeHost("detach")
	h.ProvisioningID = must(t, "register")(p.Register(ctx, h)).ProvisioningID
	must(t, "adopt")(p.Adopt(ctx, h))
	old := h.ProvisioningID

	for len(rec.ops) > 0 {
		<-rec.ops
	}
	must(t, "detach")(p.Detach(ctx, h))
	if n, _ := rawNode(t, url, old); n != nil {
		t.Fatalf("node %s still in Ironic after detach (%s)", old, n.ProvisionState)
	}
	var ops []string
	for len(rec.ops) > 0 {
		ops = append(ops, (<-rec.ops).Op)
	}
	if strings.Join(ops, ",") != "ironic.maintenance-on,ironic.delete-node" {
		t.Fatalf("detach made guarded calls %v, want maintenance-on then delete-node only", ops)
	}
	must(t, "detach again")(p.Detach(ctx, h))

	// Attach: the old UUID is unknown → ErrNotFound → register, adopt.
	if _, err := p.Adopt(ctx, h); !errors.Is(err, errclass.ErrNotFound) {
		t.Fatalf("adopt with the old node UUID: %v, want ErrNotFound", err)
	}
	if _, err := p.PowerState(ctx, h); !errors.Is(err, errclass.ErrNotFound) {
		t.Fatalf("power state with the old node UUID: %v, want ErrNotFound", err)
	}
	h.ProvisioningID = ""
	h.ProvisioningID = must(t, "re-register")(p.Register(ctx, h)).ProvisioningID
	if h.ProvisioningID == old {
		t.Fatal("re-register returned the deleted node's UUID")
	}
	must(t, "re-adopt")(p.Adopt(ctx, h))
	wantState(t, url, h.ProvisioningID, "active")
	must(t, "delete")(p.Delete(ctx, h))
}

// A boot MAC that is a port of another node is an error naming that node.
func TestRegisterMACOwnedByAnotherNode(t *testing.T) {
	url := needIronic(t)
	p := newProv(t, url, fakeHW)
	ctx := ctxT(t)
	a := fakeHost("maca")
	a.ProvisioningID = must(t, "register a")(p.Register(ctx, a)).ProvisioningID
	b := fakeHost("macb")
	b.BootMACAddress = strings.ToUpper(a.BootMACAddress)
	_, err := p.Register(ctx, b)
	if !errors.Is(err, ironic.ErrMACInUse) || !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), a.Name) {
		t.Fatalf("register with %s's MAC: %v, want ErrMACInUse naming %s", a.Name, err, a.Name)
	}
	if n, _ := rawNode(t, url, b.Name); n != nil {
		t.Fatalf("node %s was created despite the MAC conflict", b.Name)
	}
	must(t, "delete a")(p.Delete(ctx, a))
}

// The guard refuses without a lease: nothing reaches Ironic.
func TestFencedCallsReachNothing(t *testing.T) {
	url := needIronic(t)
	h0 := fakeHost("fenced")
	p := newProv(t, url, func(c *ironic.Config) {
		fakeHW(c)
		g := newGuard(nil)
		g.Block(h0.Name)
		c.Guard = g
	})
	_, err := p.Register(ctxT(t), h0)
	if !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("register of a blocked host: %v, want guard.ErrFenced", err)
	}
	if n, _ := rawNode(t, url, h0.Name); n != nil {
		t.Fatal("a node was created for a blocked host")
	}
}

// An Ironic older than the pinned microversion is refused at New with both
// versions named. A fake server, because the installed Ironic is 21.4 and
// no older one can run here.
func TestMicroversionTooOld(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"v1","version":{"id":"v1","status":"CURRENT","min_version":"1.1","version":"1.58"}}`))
	}))
	defer srv.Close()
	_, err := ironic.New(context.Background(), ironic.Config{URL: srv.URL, Guard: newGuard(nil)})
	if !errors.Is(err, ironic.ErrMicroversion) || !strings.Contains(err.Error(), "1.58") || !strings.Contains(err.Error(), ironic.Microversion) {
		t.Fatalf("New against a 1.58 Ironic: %v, want ErrMicroversion naming 1.58 and %s", err, ironic.Microversion)
	}
	// Unreachable Ironic at start is transient.
	srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = ironic.New(ctx, ironic.Config{URL: srv.URL, Guard: newGuard(nil), Timeout: 5 * time.Second})
	if !errors.Is(err, errclass.ErrTransient) {
		t.Fatalf("New against a closed port: %v, want ErrTransient", err)
	}
	if _, err := ironic.New(ctx, ironic.Config{URL: srv.URL}); !errors.Is(err, ironic.ErrConfig) {
		t.Fatalf("New without a guard: %v, want ErrConfig", err)
	}
}
