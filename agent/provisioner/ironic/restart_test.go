package ironic_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
)

// Ironic down → transient errors; Ironic back on an empty database → every
// host is re-registered and re-adopted, with no power request.
func TestIronicRestartOnEmptyDatabase(t *testing.T) {
	needIronic(t)
	u, dir, stop, errText := startIronic("restart", 0)
	if errText != "" {
		t.Fatal(errText)
	}
	defer stop()
	rec := &recorder{ops: make(chan guard.AuditRecord, 1000)}
	p := newProv(t, u, func(c *ironic.Config) { fakeHW(c); c.Guard = newGuard(rec) })
	ctx := ctxT(t)

	hosts := make([]provisioner.Host, 3)
	for i := range hosts {
		hosts[i] = fakeHost("restart")
		hosts[i].ProvisioningID = must(t, "register")(p.Register(ctx, hosts[i])).ProvisioningID
		must(t, "adopt")(p.Adopt(ctx, hosts[i]))
	}

	t.Log(strings.TrimSpace(ironicScript(t, "wipe", dir)))
	// Ironic unreachable: every call is transient, not a host error.
	for _, h := range hosts[:1] {
		for what, call := range map[string]func() (provisioner.Result, error){
			"power state": func() (provisioner.Result, error) { return p.PowerState(ctx, h) },
			"adopt":       func() (provisioner.Result, error) { return p.Adopt(ctx, h) },
			"register":    func() (provisioner.Result, error) { return p.Register(ctx, h) },
			"maintenance": func() (provisioner.Result, error) { return p.SetMaintenance(ctx, h, true) },
		} {
			if _, err := call(); !errors.Is(err, provisioner.ErrTransient) {
				t.Fatalf("%s while Ironic is down: %v, want ErrTransient", what, err)
			}
		}
	}

	pu, _ := url.Parse(u)
	t.Log(strings.TrimSpace(ironicScript(t, "start", dir, pu.Port())))
	for len(rec.ops) > 0 {
		<-rec.ops
	}
	for _, h := range hosts {
		if _, err := p.Adopt(ctx, h); !errors.Is(err, provisioner.ErrNotFound) || !strings.Contains(err.Error(), h.ProvisioningID) {
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
