package pivot_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// tiers is two real tiers — two coordinators, one rack agent each on rack
// r1 — sharing one rackfence-bmcsim, each with an operator token of the
// other for pivots.
type tiers struct {
	t         testing.TB
	a, b      *rig.Coordinator
	sim       *rig.Sim
	agentA    string
	agentB    string
	adminTokA string
	adminTokB string
	ctlBin    string
}

func startTiers(t testing.TB, bmcs int) *tiers {
	t.Helper()
	return startTiersWith(t, bmcs, nil, nil)
}

// startTiersWith starts the tiers with extra rackfence-agent arguments per
// tier (e.g. --provisioner ironic --ironic-url …).
func startTiersWith(t testing.TB, bmcs int, agentArgsA, agentArgsB []string) *tiers {
	t.Helper()
	dir := t.TempDir()
	dirA, dirB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	pA, pB := testenv.FreePort(t, "127.0.0.1"), testenv.FreePort(t, "127.0.0.1")
	urlA, urlB := fmt.Sprintf("https://127.0.0.1:%d", pA), fmt.Sprintf("https://127.0.0.1:%d", pB)
	x := &tiers{t: t, agentA: "a-r1", agentB: "b-r1", ctlBin: testenv.Binary(t, "rackfencectl")}
	// Each tier calls the other with an operator token the other issued,
	// written into the caller-visible file after both are up.
	x.a = rig.StartCoordinator(t, dirA, rig.CoordOpts{Tier: "site-a", HTTPPort: pA,
		Peers: map[string]string{"site-b": urlB}, PeerTokens: map[string]string{"site-b": filepath.Join(dirB, "operator.token")}})
	x.b = rig.StartCoordinator(t, dirB, rig.CoordOpts{Tier: "site-b", HTTPPort: pB,
		Peers: map[string]string{"site-a": urlA}, PeerTokens: map[string]string{"site-a": filepath.Join(dirA, "operator.token")}})
	x.a.Token(wire.RoleOperator, "", "operator.token")
	x.b.Token(wire.RoleOperator, "", "operator.token")
	x.adminTokA = filepath.Join(dirA, "data", "admin.token")
	x.adminTokB = filepath.Join(dirB, "data", "admin.token")
	x.sim = rig.StartSim(t, dir, bmcs, 0)
	x.a.StartAgent("r1", x.agentA, agentArgsA...)
	x.b.StartAgent("r1", x.agentB, agentArgsB...)
	return x
}

// ctl runs rackfencectl against a tier and returns its output and exit code.
func (x *tiers) ctl(c *rig.Coordinator, tokenFile string, args ...string) (string, int) {
	x.t.Helper()
	cmd := exec.Command(x.ctlBin, append([]string{"--coordinator", c.URL, "--token-file", tokenFile, "--timeout", "3m"}, args...)...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		x.t.Fatalf("rackfencectl: %v", err)
	}
	return string(out), code
}

// mutationsBy counts the BMC audit lines (mutating calls) whose User-Agent
// names agent id, from line from on.
func (x *tiers) mutationsBy(id string, from int) []string {
	var out []string
	for _, l := range x.sim.AuditLines(-1)[from:] {
		if id == "" || strings.Contains(l.UserAgent, id+";") {
			out = append(out, fmt.Sprintf("%s %s port=%d ua=%q", l.Method, l.Path, l.Port, l.UserAgent))
		}
	}
	return out
}

func TestPivotRackAndBack(t *testing.T) {
	x := startTiers(t, 6)
	a, b, sim := x.a, x.b, x.sim
	img := &wire.Image{URL: "http://127.0.0.1:1/images/ubuntu.qcow2", Checksum: "sha256:0123abcd"}
	want := map[string]string{}
	for i := 0; i < 5; i++ {
		h := sim.Host(fmt.Sprintf("h%d", i), "r1", i)
		switch i {
		case 0, 1:
			want[h.Name] = wire.StateAvailable
		case 2, 3:
			h.Image = img
			want[h.Name] = wire.StateProvisioned
		case 4:
			h.ExternallyProvisioned = true
			want[h.Name] = wire.StateExternallyProvisioned
		}
		a.Apply(h)
	}
	details := map[string]string{}
	inspected := map[string]time.Time{}
	for n, st := range want {
		h := a.WaitHost(n, 3*time.Minute, "settled in site-a", rig.StateIs(st, wire.OpOK))
		if h.Status.HardwareDetails != nil { // adopted hosts are not inspected
			details[n] = h.Status.HardwareDetails.SerialNumber
		}
		if oh := h.Status.OperationHistory; oh != nil && !oh.Inspect.End.IsZero() {
			inspected[n] = oh.Inspect.End
		}
	}
	if len(inspected) == 0 {
		t.Fatal("no host of site-a has an inspection in its operation history")
	}
	// Let power assertions of the steady state finish before the pivot.
	for n := range want {
		a.WaitHost(n, time.Minute, "powered on", func(h *wire.Host) error {
			if !h.Status.PoweredOn {
				return fmt.Errorf("powered off")
			}
			return nil
		})
	}
	before := len(sim.AuditLines(-1))

	out, code := x.ctl(a, x.adminTokA, "pivot", "--rack", "r1", "--to", "site-b", "--wait")
	if code != 0 {
		t.Fatalf("pivot exited %d:\n%s", code, out)
	}
	t.Logf("pivot output:\n%s", out)
	for _, phase := range []string{"detaching", "adopted"} {
		if !strings.Contains(out, phase) {
			t.Errorf("pivot --wait output never showed %q", phase)
		}
	}
	if m := x.mutationsBy("", before); len(m) != 0 {
		t.Errorf("mutating BMC calls during the pivot:\n%s", strings.Join(m, "\n"))
	}
	afterPivot := len(sim.AuditLines(-1))

	for n, st := range want {
		wantB := st
		if st == wire.StateProvisioned {
			wantB = wire.StateExternallyProvisioned // adopted, never redeployed
		}
		hb := b.WaitHost(n, time.Minute, "managed in site-b", rig.StateIs(wantB, wire.OpOK))
		if hb.Handoff == nil || !hb.Handoff.Confirmed || hb.Handoff.SourceTier != "site-a" {
			t.Errorf("%s in site-b: handoff %+v, want confirmed from site-a", n, hb.Handoff)
		}
		if d := hb.Status.HardwareDetails; details[n] != "" && (d == nil || d.SerialNumber != details[n]) {
			t.Errorf("%s in site-b lost its hardware details: %+v", n, hb.Status.HardwareDetails)
		}
		if end, ok := inspected[n]; ok {
			if oh := hb.Status.OperationHistory; oh == nil || !oh.Inspect.End.Equal(end) {
				t.Errorf("%s in site-b lost when it was inspected in site-a (%s): %+v", n, end, oh)
			}
		}
		evs, err := b.Admin.Events(rig.Ctx(t), n)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Items {
			if strings.HasPrefix(e.Reason, "Inspect") && !strings.Contains(e.Reason, "Skipped") {
				t.Errorf("%s was inspected in site-b: %s %s", n, e.Reason, e.Message)
			}
		}
		ha := a.Host(n)
		if ha.PivotedTo != "site-b" || ha.Intents == nil || ha.Intents.Detach == nil || !ha.Intents.Detach.Acknowledged {
			t.Errorf("%s in site-a: pivotedTo %q intents %+v, want a detached record pivoted to site-b", n, ha.PivotedTo, ha.Intents)
		}
	}

	// Management resumes in site-b: a power change there reaches the BMC.
	h2 := b.Host("h2")
	h2.Online = false
	b.Apply(h2)
	testenv.Eventually(t, time.Minute, "h2 powered off by site-b", func() error {
		st, err := sim.State(2)
		if err != nil {
			return err
		}
		if st.Power != "Off" {
			return fmt.Errorf("power %s", st.Power)
		}
		return nil
	})
	if m := x.mutationsBy(x.agentB, afterPivot); len(m) == 0 {
		t.Errorf("the power-off of h2 was not made by site-b's agent")
	}

	// The source's agent touches nothing, even when the source's spec changes.
	h3 := a.Host("h3")
	h3.Online = false
	a.Apply(h3)
	// Marker: a host added to r1 in site-a after that change (BMC 5, never
	// pivoted) becomes available through site-a's agent, so the agent has
	// taken in h3's earlier change; its calls on BMC 5 are its own to make.
	a.Apply(sim.Host("h5", "r1", 5))
	a.WaitHost("h5", 3*time.Minute, "available through site-a's agent (marker)", rig.StateIs(wire.StateAvailable, wire.OpOK))
	var touched []string
	for _, m := range x.mutationsBy(x.agentA, afterPivot) {
		if !strings.Contains(m, fmt.Sprintf("port=%d ", sim.Base+5)) {
			touched = append(touched, m)
		}
	}
	if m := touched; len(m) != 0 {
		t.Errorf("site-a's agent touched pivoted hosts:\n%s", strings.Join(m, "\n"))
	}
	if st, _ := sim.State(3); st.Power != "On" {
		t.Errorf("h3 power %s after a spec change in site-a, want On (site-a must not act)", st.Power)
	}

	// Pivot h0 back: site-a re-attaches, re-registers and re-adopts.
	out, code = x.ctl(b, x.adminTokB, "pivot", "h0", "--to", "site-a", "--wait")
	if code != 0 {
		t.Fatalf("pivot back exited %d:\n%s", code, out)
	}
	ha := a.WaitHost("h0", time.Minute, "managed again in site-a", rig.StateIs(wire.StateAvailable, wire.OpOK))
	if ha.PivotedTo != "" || (ha.Intents != nil && ha.Intents.Detach != nil) {
		t.Errorf("h0 back in site-a: pivotedTo %q detach %+v, want attached", ha.PivotedTo, ha.Intents.Detach)
	}
	if hb := b.Host("h0"); hb.PivotedTo != "site-a" {
		t.Errorf("h0 in site-b: pivotedTo %q, want site-a", hb.PivotedTo)
	}
}

func TestForgedHandoffRefused(t *testing.T) {
	x := startTiers(t, 2)
	a, b, sim := x.a, x.b, x.sim
	st, err := a.Admin.Status(rig.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	// A handoff claiming a detach site-a never made.
	h := sim.Host("forged", "r1", 0)
	h.Handoff = &wire.Handoff{SourceTier: "site-a", SourceClusterID: st.ClusterID, DetachIndex: 424242}
	_, _, err = b.Admin.ApplyHost(rig.Ctx(t), h)
	if !client.IsConflict(err) {
		t.Fatalf("forged handoff of a host site-a does not have: %v, want 409", err)
	}
	// The host exists in site-a but is managed there, not detached.
	a.Apply(sim.Host("forged", "r1", 0))
	a.WaitHost("forged", 2*time.Minute, "available in site-a", rig.StateIs(wire.StateAvailable, wire.OpOK))
	_, _, err = b.Admin.ApplyHost(rig.Ctx(t), h)
	if !client.IsConflict(err) || !strings.Contains(err.Error(), "not detached") {
		t.Fatalf("handoff of a host managed in site-a: %v, want 409 saying it is not detached", err)
	}
	// A wrong cluster ID.
	h.Handoff.SourceClusterID = "not-" + st.ClusterID
	if _, _, err = b.Admin.ApplyHost(rig.Ctx(t), h); !client.IsConflict(err) {
		t.Fatalf("handoff with a wrong cluster ID: %v, want 409", err)
	}
	// A host managed in site-b cannot be taken over by a handoff.
	b.Apply(sim.Host("mine", "r1", 1))
	b.WaitHost("mine", 2*time.Minute, "available in site-b", rig.StateIs(wire.StateAvailable, wire.OpOK))
	m := sim.Host("mine", "r1", 1)
	m.Handoff = &wire.Handoff{SourceTier: "site-a", SourceClusterID: st.ClusterID, DetachIndex: 1}
	if _, _, err = b.Admin.ApplyHost(rig.Ctx(t), m); !client.IsConflict(err) || !strings.Contains(err.Error(), "under management") {
		t.Fatalf("handoff onto a host managed in site-b: %v, want 409 saying it is under management", err)
	}
	if _, err := b.Admin.GetHost(rig.Ctx(t), "forged"); !client.IsNotFound(err) {
		t.Fatalf("a refused handoff left a record in site-b: %v", err)
	}
}

func TestPivotResumesAfterDestinationOutage(t *testing.T) {
	x := startTiers(t, 1)
	a, b, sim := x.a, x.b, x.sim
	a.Apply(sim.Host("h0", "r1", 0))
	a.WaitHost("h0", 2*time.Minute, "available in site-a", rig.StateIs(wire.StateAvailable, wire.OpOK))
	b.Proc.Stop(10 * time.Second)

	// First steps: detaching, then the ack arrives; pivot is repeated
	// until it gets as far as the unreachable destination.
	var out string
	var code int
	testenv.Eventually(t, 2*time.Minute, "pivot reaching the unreachable site-b", func() error {
		out, code = x.ctl(a, x.adminTokA, "pivot", "h0", "--to", "site-b")
		if !strings.Contains(out, "unreachable") {
			return fmt.Errorf("pivot exited %d: %s", code, out)
		}
		return nil
	})
	if !strings.Contains(out, "unreachable") || !strings.Contains(out, "detached") {
		t.Fatalf("pivot with site-b down (exit %d) did not report where it stopped:\n%s", code, out)
	}
	ha := a.Host("h0")
	if ha.Intents == nil || ha.Intents.Detach == nil || !ha.Intents.Detach.Acknowledged || ha.PivotedTo != "" {
		t.Fatalf("h0 in site-a after a failed pivot: %+v pivotedTo %q, want detached (acknowledged), not pivoted", ha.Intents, ha.PivotedTo)
	}
	if ha.Status.OperationalStatus != wire.OpDetached {
		t.Fatalf("h0 in site-a: %s, want detached (never managed twice)", ha.Status.OperationalStatus)
	}

	b.Start()
	out, code = x.ctl(a, x.adminTokA, "pivot", "h0", "--to", "site-b", "--wait")
	if code != 0 {
		t.Fatalf("re-run of the pivot exited %d:\n%s", code, out)
	}
	b.WaitHost("h0", time.Minute, "available in site-b", rig.StateIs(wire.StateAvailable, wire.OpOK))
}
