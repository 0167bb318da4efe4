package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// chassisGets is how many times BMC i of sim was asked for a chassis
// document (each health read asks once).
func chassisGets(sim *bmcsim.Sim, i int) int {
	n := 0
	for p, c := range sim.State(i).Gets {
		if strings.HasPrefix(p, "/redfish/v1/Chassis/") {
			n += c
		}
	}
	return n
}

// healthPaceRack starts one simulated BMC and a rack of the direct
// provisioner with the given status refresh and health interval (0: the
// default), and brings one host to available with its health read.
func healthPaceRack(t *testing.T, refresh, health time.Duration) (*bmcsim.Sim, *rackAgent) {
	t.Helper()
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c, r, _ := newRack(t, agentOpts{refresh: refresh, tune: func(cfg *Config) {
		p, err := direct.New(direct.Config{Guard: cfg.Guard, BMC: bmc.Options{Timeout: 20 * time.Second, MutationTimeout: 20 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Provisioner, cfg.HealthInterval = p, health
	}})
	h := fakeHost("hp0", "r1", 0)
	h.BMC.Address, h.BootMACAddress, h.Online = sim.Address(0), sim.MAC(0), false
	c.Apply(h)
	c.WaitHost("hp0", waitLong, "available with its health", func(h *wire.Host) error {
		if err := healthIs(wire.HardwareOK, "")(h); err != nil {
			return err
		}
		return stateIs(wire.StateAvailable, wire.OpOK)(h)
	})
	return sim, r
}

// TestHealthReadAtItsOwnPace: the hardware health is read every
// HealthInterval, not at every status refresh. With a 1 s refresh and the
// default interval (5 min), four refreshes of an available host (four
// reconciles, the marker that each could have read) ask the BMC for no
// chassis beyond the first read, after the inspection; with an hour's
// refresh and a 1 s interval the host is looked at for its health alone
// and read again and again.
func TestHealthReadAtItsOwnPace(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a simulated BMC for seconds")
	}
	t.Run("refresh shorter", func(t *testing.T) {
		sim, r := healthPaceRack(t, time.Second, 0)
		first := chassisGets(sim, 0)
		ok := r.a.cfg.Metrics.reconciles.WithLabelValues("ok")
		base := testutil.ToFloat64(ok)
		// Four refresh periods and four reconciles since: each could
		// have read the health.
		time.Sleep(4 * time.Second)
		deadline := time.Now().Add(waitLong)
		for testutil.ToFloat64(ok) < base+4 {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than 4 reconciles in %s after available (%v)", waitLong, testutil.ToFloat64(ok)-base)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if n := chassisGets(sim, 0); n != first || first != 1 {
			t.Errorf("chassis read %d times after 4 refreshes (%d at available), want once: health read at every status refresh", n, first)
		}
	})
	t.Run("health interval shorter", func(t *testing.T) {
		sim, _ := healthPaceRack(t, time.Hour, time.Second)
		deadline := time.Now().Add(waitLong)
		for chassisGets(sim, 0) < 4 {
			if time.Now().After(deadline) {
				t.Fatalf("chassis read %d times in %s with a 1 s health interval, want 4 or more", chassisGets(sim, 0), waitLong)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
