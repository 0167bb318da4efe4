package pivot_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestPivotIronic: each tier drives its own real Ironic. The pivoted nodes
// leave the source's Ironic without deprovisioning (no BMC command at all)
// and are adopted into the destination's.
func TestPivotIronic(t *testing.T) {
	irA, irB := rig.StartIronic(t), rig.StartIronic(t)
	urlA, urlB := irA.URL, irB.URL
	x := startTiersWith(t, 2, []string{"--provisioner", "ironic", "--ironic-url", urlA, "--lease-ttl", "10s"},
		[]string{"--provisioner", "ironic", "--ironic-url", urlB, "--lease-ttl", "10s"})
	a, b, sim := x.a, x.b, x.sim

	ext := sim.Host("i0", "r1", 0)
	ext.ExternallyProvisioned = true
	a.Apply(ext)
	a.Apply(sim.Host("i1", "r1", 1))
	a.WaitHost("i0", 4*time.Minute, "adopted through site-a's Ironic", rig.StateIs(wire.StateExternallyProvisioned, wire.OpOK))
	a.WaitHost("i1", 4*time.Minute, "available through site-a's Ironic", rig.StateIs(wire.StateAvailable, wire.OpOK))
	if n := irA.Nodes(t); len(n) != 2 {
		t.Fatalf("site-a's Ironic has %d nodes before the pivot, want 2: %+v", len(n), n)
	}
	// Let Ironic's own power sync settle before counting BMC commands.
	testenv.Eventually(t, time.Minute, "powered on", func() error {
		for _, n := range []string{"i0", "i1"} {
			if h := a.Host(n); !h.Status.PoweredOn {
				return fmt.Errorf("%s off", n)
			}
		}
		return nil
	})
	before := len(sim.AuditLines(-1))

	out, code := x.ctl(a, x.adminTokA, "pivot", "--rack", "r1", "--to", "site-b", "--wait")
	if code != 0 {
		t.Fatalf("pivot exited %d:\n%s", code, out)
	}
	if n := irA.Nodes(t); len(n) != 0 {
		t.Errorf("site-a's Ironic still has nodes after the pivot: %+v", n)
	}
	b.WaitHost("i0", 4*time.Minute, "adopted in site-b", rig.StateIs(wire.StateExternallyProvisioned, wire.OpOK))
	b.WaitHost("i1", 4*time.Minute, "available in site-b", rig.StateIs(wire.StateAvailable, wire.OpOK))
	testenv.Eventually(t, 2*time.Minute, "site-b's Ironic nodes settled", func() error {
		states := map[string]string{}
		for _, n := range irB.Nodes(t) {
			states[n.Name] = n.ProvisionState
		}
		if states["i0"] != "active" || states["i1"] != "available" {
			return fmt.Errorf("site-b's Ironic nodes: %v, want i0 active (adopted), i1 available", states)
		}
		return nil
	})
	for _, l := range sim.AuditLines(-1)[before:] {
		t.Errorf("mutating BMC call during the pivot: %s %s %s ua=%q", l.Method, l.Path, l.Body, l.UserAgent)
	}
}
