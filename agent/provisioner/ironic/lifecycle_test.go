package ironic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/wire"
)

// Register → inspect → available → provision → deprovision → delete with
// the fake-hardware driver of a real Ironic.
func TestLifecycleFakeHardware(t *testing.T) {
	url := needIronic(t)
	rec := &recorder{ops: make(chan guard.AuditRecord, 100)}
	p := newProv(t, url, func(c *ironic.Config) { fakeHW(c); c.Guard = newGuard(rec) })
	ctx := ctxT(t)
	h := fakeHost("life")

	r := must(t, "register")(p.Register(ctx, h))
	if r.ProvisioningID == "" {
		t.Fatal("register returned no node UUID")
	}
	h.ProvisioningID = r.ProvisioningID
	wantState(t, url, h.ProvisioningID, "manageable")

	// Registering again finds the same node (by UUID, by name).
	r2 := must(t, "register again")(p.Register(ctx, h))
	h2 := h
	h2.ProvisioningID = ""
	r3 := must(t, "register by name")(p.Register(ctx, h2))
	if r2.ProvisioningID != r.ProvisioningID || r3.ProvisioningID != r.ProvisioningID {
		t.Fatalf("register found %s / %s, want %s", r2.ProvisioningID, r3.ProvisioningID, r.ProvisioningID)
	}

	ri := must(t, "inspect")(p.Inspect(ctx, h))
	if ri.HardwareDetails == nil {
		t.Log("fake inspection produced no details (fake-hardware records none)")
	}
	wantState(t, url, h.ProvisioningID, "manageable")

	must(t, "provide")(p.Provide(ctx, h))
	wantState(t, url, h.ProvisioningID, "available")

	// Provisioning without an image is refused before Ironic is asked.
	if _, err := p.Provision(ctx, h); !errors.Is(err, errclass.ErrFailed) {
		t.Fatalf("provision without image: %v, want ErrFailed", err)
	}
	h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/test.qcow2", Checksum: "sha256:" + strings.Repeat("ab", 32)}
	must(t, "provision")(p.Provision(ctx, h))
	n := wantState(t, url, h.ProvisioningID, "active")
	if n.InstanceInfo["image_source"] != h.Image.URL || n.InstanceInfo["image_os_hash_algo"] != "sha256" {
		t.Fatalf("instance_info = %v, want image_source %s and sha256", n.InstanceInfo, h.Image.URL)
	}
	// Provision again is a no-op on an active node.
	must(t, "provision again")(p.Provision(ctx, h))

	must(t, "deprovision")(p.Deprovision(ctx, h))
	wantState(t, url, h.ProvisioningID, "available")

	must(t, "delete")(p.Delete(ctx, h))
	if n, _ := rawNode(t, url, h.ProvisioningID); n != nil {
		t.Fatalf("node still there after delete: %s", n.ProvisionState)
	}
	// Deleting a missing node is success.
	must(t, "delete again")(p.Delete(ctx, h))
	// Every step above mutated Ironic only through the guard.
	if rec.n.Load() < 8 {
		t.Fatalf("guard saw %d calls, want at least 8 (create, port, driver_info, manage, inspect, provide, instance_info, deploy, undeploy, delete)", rec.n.Load())
	}

	// A state the operation cannot start from is ErrWrongState.
	h3 := fakeHost("wrong")
	r = must(t, "register")(p.Register(ctx, h3))
	h3.ProvisioningID = r.ProvisioningID
	if _, err := p.Deprovision(ctx, h3); !errors.Is(err, ironic.ErrWrongState) {
		t.Fatalf("deprovision of a manageable node: %v, want ErrWrongState", err)
	}
	must(t, "delete")(p.Delete(ctx, h3))
}
