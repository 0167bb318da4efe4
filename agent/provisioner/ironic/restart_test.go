package ironic_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/testkit/rig"
)

// Ironic down → transient errors; Ironic back on an empty database → every
// host is re-registered and re-adopted, with no power request.
func TestIronicRestartOnEmptyDatabase(t *testing.T) {
	needIronic(t)
	ir := rig.StartIronic(t)
	u := ir.URL
	rec := &recorder{ops: make(chan guard.AuditRecord, 1000)}
	p := newProv(t, u, func(c *ironic.Config) { fakeHW(c); c.Guard = newGuard(rec) })
	ctx := ctxT(t)

	hosts := make([]provisioner.Host, 3)
	for i := range hosts {
		hosts[i] = fakeHost("restart")
		hosts[i].ProvisioningID = must(t, "register")(p.Register(ctx, hosts[i])).ProvisioningID
		must(t, "adopt")(p.Adopt(ctx, hosts[i]))
	}

	t.Log(strings.TrimSpace(mustScript(t, ir, "wipe")))
	// Ironic unreachable: every call is transient, not a host error.
	for _, h := range hosts[:1] {
		for what, call := range map[string]func() (provisioner.Result, error){
			"power state": func() (provisioner.Result, error) { return p.PowerState(ctx, h) },
			"adopt":       func() (provisioner.Result, error) { return p.Adopt(ctx, h) },
			"register":    func() (provisioner.Result, error) { return p.Register(ctx, h) },
			"maintenance": func() (provisioner.Result, error) { return p.SetMaintenance(ctx, h, true) },
		} {
			if _, err := call(); !errors.Is(err, errclass.ErrTransient) {
				t.Fatalf("%s while Ironic is down: %v, want ErrTransient", what, err)
			}
		}
	}

	t.Log(strings.TrimSpace(mustScript(t, ir, "start", fmt.Sprint(ir.Port))))
	for len(rec.ops) > 0 {
		<-rec.ops
	}
	for _, h := range hosts {
		if _, err := p.Adopt(ctx, h); !errors.Is(err, errclass.ErrNotFound) || !strings.Contains(err.Error(), h.ProvisioningID) {
			t.Fatalf("adopt %s after Ironic lost it: %v, want ErrNotFound naming %s", h.Name, err, h.ProvisioningID)
		}
		// The state machine re-registers (the stale UUID is not found, so
		// the node is created again by name), then re-adopts.
		id := must(t, "re-register")(p.Register(ctx, h)).ProvisioningID
		if id == h.ProvisioningID {
			t.Fatalf("re-register of %s returned the lost UUID", h.Name)
		}
		h.ProvisioningID = id
		must(t, "re-adopt")(p.Adopt(ctx, h))
		wantState(t, u, id, "active")
	}
	var ops []string
	for len(rec.ops) > 0 {
		a := <-rec.ops
		ops = append(ops, a.Op)
		if strings.Contains(a.Op, "power") && !strings.Contains(a.Op, "provision") {
			t.Fatalf("re-registration asked Ironic for a power change: %+v", a)
		}
	}
	t.Logf("guarded calls for %d hosts: %v", len(hosts), ops)
}

// mustScript runs deploy/peers/ironic.sh CMD on ir's state dir.
func mustScript(t testing.TB, ir *rig.Ironic, cmd string, args ...string) string {
	t.Helper()
	out, err := ir.Script(cmd, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
