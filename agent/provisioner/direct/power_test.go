package direct_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

func powerProv(t *testing.T, cfg bmcsim.Config) (*bmcsim.Sim, *direct.Provisioner) {
	t.Helper()
	sim, err := bmcsim.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 7, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	p, err := direct.New(direct.Config{Guard: guard.NewGuard(h, &guard.MemoryAudit{}), BMC: bmc.Options{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return sim, p
}

// A BMC applying power changes 1–3 s after accepting them: the result says
// on or off only once the BMC reads it so.
func TestSetPowerResultIsWhatTheBMCReads(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for delayed power changes")
	}
	sim, p := powerProv(t, bmcsim.Config{Hosts: 1, Knobs: bmcsim.Knobs{PowerDelaySeconds: 1, PowerDelayJitterSeconds: 2}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := host(sim, 0, "password")
	for _, on := range []bool{true, false} {
		res, err := p.SetPower(ctx, h, on)
		if err != nil {
			t.Fatal(err)
		}
		bmcOn := sim.State(0).Power == "On"
		if res.PoweredOn == nil || *res.PoweredOn != on || bmcOn != on {
			t.Fatalf("SetPower(%v): result %v while the BMC reads %s", on, res.PoweredOn, sim.State(0).Power)
		}
	}
}

// A system with no PowerState registers (power unknown: PoweredOn nil),
// is powered on and off without error, and reports no power it did not
// read.
func TestNoPowerStateRegisters(t *testing.T) {
	sim, p := powerProv(t, bmcsim.Config{Hosts: 1, Profile: "no-powerstate"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := host(sim, 0, "password")
	res, err := p.Register(ctx, h)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if res.PoweredOn != nil || !strings.Contains(res.Message, "no power state") {
		t.Fatalf("register: PoweredOn %v, message %q; want nil and a message saying so", res.PoweredOn, res.Message)
	}
	for _, on := range []bool{true, false} {
		var r provisioner.Result
		if r, err = p.SetPower(ctx, h, on); err != nil || r.PoweredOn != nil {
			t.Fatalf("SetPower(%v) = %+v, %v; want no power read, no error", on, r, err)
		}
	}
	if st := sim.State(0).Power; st != "Off" {
		t.Fatalf("the resets did not reach the BMC: %s", st)
	}
}
