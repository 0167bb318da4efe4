package direct_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// softSetup is setup with a simulator whose OS shuts down as cfg says.
func softSetup(t *testing.T, cfg bmcsim.Config) (*bmcsim.Sim, *direct.Provisioner, *guard.MemoryAudit) {
	t.Helper()
	cfg.Hosts, cfg.PowerOn = 1, true
	sim, err := bmcsim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 7, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	ma := &guard.MemoryAudit{}
	p, err := direct.New(direct.Config{Guard: guard.NewGuard(h, ma), BMC: bmc.Options{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return sim, p, ma
}

// TestSoftPowerOffObeyed: GracefulShutdown is sent once; while the OS
// shuts down the call reports InProgress without pressing again; once off,
// PoweredOn false.
func TestSoftPowerOffObeyed(t *testing.T) {
	sim, p, ma := softSetup(t, bmcsim.Config{GracefulShutdownDelay: 300 * time.Millisecond})
	ctx := context.Background()
	h := host(sim, 0, "password")
	res, err := p.SoftPowerOff(ctx, h)
	if err != nil || !res.InProgress || res.PoweredOn == nil || !*res.PoweredOn {
		t.Fatalf("first soft power-off: %v %+v; want in progress, on", err, res)
	}
	res, err = p.SoftPowerOff(ctx, h)
	if err != nil || !res.InProgress {
		t.Fatalf("second call: %v %+v; want still in progress", err, res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for res.InProgress && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if res, err = p.SoftPowerOff(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if res.InProgress || res.PoweredOn == nil || *res.PoweredOn || sim.State(0).Power != "Off" {
		t.Fatalf("after the shutdown: %+v, sim %+v; want off", res, sim.State(0))
	}
	n := 0
	for _, r := range ma.Records() {
		if strings.Contains(r.Op, "soft") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("graceful shutdown sent %d times, want once: %+v", n, ma.Records())
	}
}

// TestSoftPowerOffIgnoredThenHard: an OS that never shuts down stays on;
// the hard power-off (what the state machine falls back to) powers it off.
func TestSoftPowerOffIgnoredThenHard(t *testing.T) {
	sim, p, _ := softSetup(t, bmcsim.Config{IgnoreGracefulShutdown: true})
	ctx := context.Background()
	h := host(sim, 0, "password")
	for i := 0; i < 3; i++ {
		res, err := p.SoftPowerOff(ctx, h)
		if err != nil || !res.InProgress {
			t.Fatalf("soft power-off %d: %v %+v; want in progress", i, err, res)
		}
	}
	if sim.State(0).Power != "On" {
		t.Fatalf("the simulated OS obeyed: %+v", sim.State(0))
	}
	if _, err := p.SetPower(ctx, h, false); err != nil {
		t.Fatal(err)
	}
	if sim.State(0).Power != "Off" {
		t.Fatalf("hard power-off left %+v", sim.State(0))
	}
	// A later soft power-off of the host, on again, sends a new request.
	if _, err := p.SetPower(ctx, h, true); err != nil {
		t.Fatal(err)
	}
	sim2 := sim.State(0)
	if sim2.Power != "On" {
		t.Fatalf("power on left %+v", sim2)
	}
}

// TestSoftPowerOffAtOnce: an OS that powers off at once is reported off by
// the first call.
func TestSoftPowerOffAtOnce(t *testing.T) {
	sim, p, _ := softSetup(t, bmcsim.Config{})
	res, err := p.SoftPowerOff(context.Background(), host(sim, 0, "password"))
	if err != nil || res.InProgress || res.PoweredOn == nil || *res.PoweredOn {
		t.Fatalf("soft power-off: %v %+v; want off at once", err, res)
	}
}
