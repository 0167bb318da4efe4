package ironic_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/testenv/rig"
)

// Ironic's ipmi driver (its own ipmitool, cipher suite 3) against openipmi's
// ipmi_sim: manage reads the simulator's power state without commanding
// it, power on/off through Ironic reach the simulator, and a fenced power
// call reaches neither Ironic nor the BMC.
func TestIronicIPMIDriverAgainstOpenIPMISim(t *testing.T) {
	url := needIronic(t)
	sim := rig.StartIPMISim(t)
	port := sim.Port
	p := newProv(t, url, nil)
	ctx := ctxT(t)
	h := provisioner.Host{
		Name:           uniqName("ipmisim"),
		BMC:            api.BMC{Address: fmt.Sprintf("ipmi://127.0.0.1:%d", port)},
		Username:       "admin",
		Password:       "password",
		BootMACAddress: fakeHost("x").BootMACAddress,
	}
	start := time.Now()
	h.ProvisioningID = must(t, "register")(p.Register(ctx, h)).ProvisioningID
	t.Logf("register (enroll, manage: Ironic reads power from ipmi_sim): %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := p.Delete(dctx, h); err != nil {
			t.Logf("delete %s: %v", h.Name, err)
		}
	})
	n := wantState(t, url, h.ProvisioningID, "manageable")
	if n.Driver != "ipmi" || n.DriverInfo["ipmi_cipher_suite"] != "3" || n.PowerState != "power off" {
		t.Fatalf("node driver %q, cipher suite %v, power %q; want ipmi, 3 and the simulator's power off",
			n.Driver, n.DriverInfo["ipmi_cipher_suite"], n.PowerState)
	}
	if got := sim.Commands(t); len(got) != 0 {
		t.Fatalf("registration sent commands to the BMC: %q", got)
	}

	start = time.Now()
	if r := must(t, "power on")(p.SetPower(ctx, h, true)); r.PoweredOn == nil || !*r.PoweredOn {
		t.Fatalf("power on through Ironic: %+v", r)
	}
	t.Logf("power on through Ironic: %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if r := must(t, "power off")(p.SetPower(ctx, h, false)); r.PoweredOn == nil || *r.PoweredOn {
		t.Fatalf("power off through Ironic: %+v", r)
	}
	t.Logf("power off through Ironic: %s", time.Since(start).Round(time.Millisecond))
	if got, want := strings.Join(rig.Distinct(sim.Commands(t)), ","), "set power 1,set power 0"; got != want {
		t.Fatalf("the BMC received %q through Ironic; want %q", got, want)
	}

	// Without a lease the provisioner refuses before asking Ironic.
	fenced := newProv(t, url, func(c *ironic.Config) {
		c.Guard = guard.NewGuard(fence.NewHolder(nil), nil)
	})
	if _, err := fenced.SetPower(ctx, h, true); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("power on without a lease: %v; want ErrFenced", err)
	}
	n = wantState(t, url, h.ProvisioningID, "manageable")
	if n.PowerState != "power off" || n.TargetPowerState != "" {
		t.Fatalf("Ironic power %q (target %q) after a fenced call; want power off", n.PowerState, n.TargetPowerState)
	}
	if got, want := strings.Join(rig.Distinct(sim.Commands(t)), ","), "set power 1,set power 0"; got != want {
		t.Fatalf("the BMC received %q; want %q (nothing after the fenced call)", got, want)
	}
}
