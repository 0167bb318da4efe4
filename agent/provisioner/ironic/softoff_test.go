package ironic_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// startShutdownSim is startSim with a simulated OS that shuts down as cfg
// says (powered on).
func startShutdownSim(t *testing.T, cfg bmcsim.Config) (*bmcsim.Sim, string) {
	t.Helper()
	cfg.Hosts, cfg.PowerOn = 1, true
	cfg.AuditPath = filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := bmcsim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim, cfg.AuditPath
}

// registerAvailable registers h and makes it available (inspect, provide).
func registerAvailable(t *testing.T, p *ironic.Provisioner, url string, h *provisioner.Host) {
	t.Helper()
	ctx := ctxT(t)
	r := must(t, "register")(p.Register(ctx, *h))
	h.ProvisioningID = r.ProvisioningID
	must(t, "inspect")(p.Inspect(ctx, *h))
	must(t, "provide")(p.Provide(ctx, *h))
	wantState(t, url, h.ProvisioningID, "available")
}

// TestSoftPowerOffAndReinspectRedfish: Ironic's soft power off reaches the
// BMC as GracefulShutdown; an available node is inspected again (manage,
// inspect) and provided back.
func TestSoftPowerOffAndReinspectRedfish(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	sim, audit := startShutdownSim(t, bmcsim.Config{})
	p := newProv(t, url, func(c *ironic.Config) { c.SoftPowerOffTimeout = 30 * time.Second })
	ctx := ctxT(t)
	h := simHost(sim, 0, uniqName("soft"))
	registerAvailable(t, p, url, &h)

	res, err := p.SoftPowerOff(ctx, h)
	for i := 0; err == nil && res.InProgress && i < 200; i++ {
		time.Sleep(100 * time.Millisecond)
		res, err = p.SoftPowerOff(ctx, h)
	}
	if err != nil || res.InProgress || res.PoweredOn == nil || *res.PoweredOn {
		t.Fatalf("soft power off through Ironic: %v %+v; want off", err, res)
	}
	if s := sim.State(0).Power; s != "Off" {
		t.Fatalf("simulator power %q after the soft power off", s)
	}
	rs := resets(auditLines(t, audit))
	if len(rs) == 0 || !strings.Contains(rs[len(rs)-1], "GracefulShutdown") {
		t.Fatalf("simulator saw resets %v, want GracefulShutdown last", rs)
	}
	must(t, "power on")(p.SetPower(ctx, h, true))

	// Re-inspection of the available node: no details passed in.
	n := wantState(t, url, h.ProvisioningID, "available")
	t.Logf("inspect interface %s", n.InspectInterface)
	var ri provisioner.Result
	for i := 0; i < 20; i++ {
		if ri = must(t, "re-inspect")(p.Inspect(ctx, h)); !ri.InProgress {
			break
		}
	}
	if ri.HardwareDetails == nil {
		t.Fatalf("re-inspection gave no details: %+v", ri)
	}
	if n.InspectInterface != "" && n.InspectInterface != "no-inspect" {
		wantState(t, url, h.ProvisioningID, "manageable")
	}
	must(t, "provide")(p.Provide(ctx, h))
	wantState(t, url, h.ProvisioningID, "available")
	must(t, "delete")(p.Delete(ctx, h))
}

// TestSoftPowerOffIgnoredIronic: an OS that ignores the graceful shutdown
// stays on; Ironic gives up after SoftPowerOffTimeout and SoftPowerOff keeps
// answering InProgress without asking again, until the hard power-off (the
// state machine's fallback) powers the host off.
func TestSoftPowerOffIgnoredIronic(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	sim, audit := startShutdownSim(t, bmcsim.Config{IgnoreGracefulShutdown: true})
	p := newProv(t, url, func(c *ironic.Config) { c.SoftPowerOffTimeout = 2 * time.Second })
	ctx := ctxT(t)
	h := simHost(sim, 0, uniqName("hung"))
	registerAvailable(t, p, url, &h)

	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := p.SoftPowerOff(ctx, h)
		if err != nil || !res.InProgress {
			t.Fatalf("soft power off of a hung OS: %v %+v; want in progress", err, res)
		}
		if n := wantState(t, url, h.ProvisioningID, "available"); n.TargetPowerState == "" && n.LastError != "" {
			break // Ironic gave up
		}
		time.Sleep(200 * time.Millisecond)
	}
	res, err := p.SoftPowerOff(ctx, h)
	if err != nil || !res.InProgress || !strings.Contains(res.Message, "gave up") {
		t.Fatalf("after Ironic gave up: %v %+v, want in progress, saying Ironic gave up", err, res)
	}
	graceful := 0
	for _, r := range resets(auditLines(t, audit)) {
		if strings.Contains(r, "GracefulShutdown") {
			graceful++
		}
	}
	if graceful != 1 {
		t.Fatalf("GracefulShutdown sent %d times, want once", graceful)
	}
	must(t, "hard power off")(p.SetPower(ctx, h, false))
	if s := sim.State(0).Power; s != "Off" {
		t.Fatalf("simulator power %q after the hard power off", s)
	}
	must(t, "delete")(p.Delete(ctx, h))
}
