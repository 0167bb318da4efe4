package ironic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/wire"
)

// An externally provisioned host: register, then adopt → active, with no
// power change.
func TestAdoptFakeHardware(t *testing.T) {
	url := needIronic(t)
	p := newProv(t, url, fakeHW)
	ctx := ctxT(t)
	h := fakeHost("adopt")
	h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/running.qcow2"}
	r := must(t, "register")(p.Register(ctx, h))
	h.ProvisioningID = r.ProvisioningID
	before := wantState(t, url, h.ProvisioningID, "manageable").PowerState
	must(t, "adopt")(p.Adopt(ctx, h))
	n := wantState(t, url, h.ProvisioningID, "active")
	if n.PowerState != before {
		t.Fatalf("power state changed by adopt: %q → %q", before, n.PowerState)
	}
	if n.InstanceInfo["image_source"] != h.Image.URL {
		t.Fatalf("instance_info = %v, want image_source %s", n.InstanceInfo, h.Image.URL)
	}
	// Adopting an active node again is a no-op.
	must(t, "adopt again")(p.Adopt(ctx, h))
	must(t, "delete")(p.Delete(ctx, h))
}

// Adopt failure (reproducible with the installed Ironic: boot pxe + deploy ramdisk and no port): Adopt
// returns the state machine's error with Ironic's last_error; a retry fails
// the same way; once fixed (the boot MAC's port registered) it reaches
// active.
func TestAdoptFailureThenFixed(t *testing.T) {
	url := needIronic(t)
	p := newProv(t, url, func(c *ironic.Config) {
		fakeHW(c)
		c.Interfaces = map[string]string{"boot": "pxe", "deploy": "ramdisk"}
	})
	ctx := ctxT(t)
	h := fakeHost("adoptfail")
	mac := h.BootMACAddress
	h.BootMACAddress = "" // the fault: no port
	r := must(t, "register")(p.Register(ctx, h))
	h.ProvisioningID = r.ProvisioningID

	for i := 0; i < 2; i++ {
		_, err := p.Adopt(ctx, h)
		if !errors.Is(err, errclass.ErrFailed) || !errors.Is(err, ironic.ErrStateFailed) {
			t.Fatalf("adopt #%d: %v, want ErrStateFailed (a errclass.ErrFailed)", i+1, err)
		}
		if !strings.Contains(err.Error(), "adopt failed") || !strings.Contains(err.Error(), "port") {
			t.Fatalf("adopt #%d error does not carry the state and Ironic's last_error: %v", i+1, err)
		}
		wantState(t, url, h.ProvisioningID, "adopt failed")
	}

	// The fix: the host gets its boot MAC (registering again adds the port)
	// and the operator gives Ironic the ramdisk's kernel and initrd.
	h.BootMACAddress = mac
	must(t, "register with MAC")(p.Register(ctx, h))
	operatorPatch(t, url, h.ProvisioningID, `[{"op":"add","path":"/instance_info","value":{"kernel":"http://127.0.0.1:9/k","ramdisk":"http://127.0.0.1:9/r"}}]`)
	_, err := p.Adopt(ctx, h)
	if err != nil {
		n, _ := rawNode(t, url, h.ProvisioningID)
		t.Fatalf("adopt after the fix: %v (node %+v)", err, n)
	}
	n := wantState(t, url, h.ProvisioningID, "active")
	if n.LastError != "" {
		t.Fatalf("last_error kept after a successful adopt: %q", n.LastError)
	}
	must(t, "delete")(p.Delete(ctx, h))
}
