package ironic_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/rig"
)

// Ironic's ipmi driver (its own ipmitool, cipher suite 3) against both IPMI
// simulators. Against pyghmi's fakebmc: manage verifies through it, power
// on/off reaches it, adopt, detach and re-attach send it no power command.
// Against openipmi's ipmi_sim: manage reads the simulator's power state
// without commanding it, power on/off through Ironic reach the simulator,
// and a fenced power call reaches neither Ironic nor the BMC.
func TestIronicIPMIDriver(t *testing.T) {
	url := needIronic(t)
	t.Run("fakebmc", func(t *testing.T) {
		sim := rig.StartFakeBMC(t)
		p, ctx, h := ipmiCase(t, url, "ipmi", sim.Addr)
		registerIPMI(ctx, t, p, url, &h)
		if l := sim.PowerLines(); len(l) != 0 {
			t.Fatalf("registration sent power commands: %v", l)
		}

		must(t, "power on")(p.SetPower(ctx, h, true))
		must(t, "power off")(p.SetPower(ctx, h, false))
		must(t, "power on")(p.SetPower(ctx, h, true))
		l := sim.PowerLines()
		if len(l) != 3 || !strings.Contains(l[0], "powered on") || !strings.Contains(l[1], "remove power") {
			t.Fatalf("simulator executed %v, want on, off, on", l)
		}

		n := adoptDetachReattach(ctx, t, p, url, &h)
		if n.PowerState != "power on" {
			t.Fatalf("power %q after re-attach, want power on", n.PowerState)
		}
		if l2 := sim.PowerLines(); len(l2) != len(l) {
			t.Fatalf("adopt/detach/attach sent power commands: %v", l2[len(l):])
		}
		must(t, "delete")(p.Delete(ctx, h))
	})
	t.Run("ipmi_sim", func(t *testing.T) {
		sim := rig.StartIPMISim(t)
		p, ctx, h := ipmiCase(t, url, "ipmisim", sim.Addr)
		registerIPMI(ctx, t, p, url, &h)
		t.Cleanup(func() {
			dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := p.Delete(dctx, h); err != nil {
				t.Logf("delete %s: %v", h.Name, err)
			}
		})
		if got := sim.Commands(t); len(got) != 0 {
			t.Fatalf("registration sent commands to the BMC: %q", got)
		}

		start := time.Now()
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
		n := wantState(t, url, h.ProvisioningID, "manageable")
		if n.PowerState != "power off" || n.TargetPowerState != "" {
			t.Fatalf("Ironic power %q (target %q) after a fenced call; want power off", n.PowerState, n.TargetPowerState)
		}
		if got, want := strings.Join(rig.Distinct(sim.Commands(t)), ","), "set power 1,set power 0"; got != want {
			t.Fatalf("the BMC received %q; want %q (nothing after the fenced call)", got, want)
		}
	})
}
