package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/coordtest"
)

// healthIs is a WaitHost condition on the status' hardware health.
func healthIs(health, problem string) func(h *wire.Host) error {
	return func(h *wire.Host) error {
		if h.Status == nil || h.Status.Health == nil || h.Status.Health.Health != health {
			return fmt.Errorf("status health %+v, want %s", h.Status, health)
		}
		if problem != "" && !strings.Contains(strings.Join(h.Status.Health.Problems, "; "), problem) {
			return fmt.Errorf("health problems %q lack %q", h.Status.Health.Problems, problem)
		}
		return nil
	}
}

// directRack starts one simulated BMC (default profile) and a rack whose
// agent drives it with the direct provisioner.
func directRack(t *testing.T) (*bmcsim.Sim, *coordtest.Coordinator, *rackAgent) {
	t.Helper()
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c, r, _ := newRack(t, agentOpts{tune: func(cfg *Config) {
		p, err := direct.New(direct.Config{Guard: cfg.Guard, BMC: bmc.Options{Timeout: 20 * time.Second, MutationTimeout: 20 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		// Read the health at every (1 s) refresh, so a fault shows soon.
		cfg.Provisioner, cfg.HealthInterval = p, time.Second
	}})
	return sim, c, r
}

// TestHardwareHealthInStatus: with the direct provisioner against the
// simulator, a registered host's status carries its BMC's health (OK on
// the default profile), a failed power supply the BMC reports turns it
// Critical naming the supply, and the agent's metrics count the host by
// health and by component without naming it; a repaired supply is OK
// again, with a new since.
func TestHardwareHealthInStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a simulated BMC for seconds")
	}
	sim, c, r := directRack(t)
	h := fakeHost("hh0", "r1", 0)
	h.BMC.Address, h.BootMACAddress, h.Online = sim.Address(0), sim.MAC(0), false
	c.Apply(h)
	c.WaitHost("hh0", waitLong, "health OK", healthIs(wire.HardwareOK, ""))
	first := c.Host("hh0").Status.Health
	if first.Components[wire.HealthPowerSupply] != wire.HardwareOK || first.Since.IsZero() {
		t.Fatalf("health %+v", first)
	}

	if err := sim.SetKnobs(0, bmcsim.Knobs{Health: bmcsim.HealthKnobs{PSUFailed: true}}); err != nil {
		t.Fatal(err)
	}
	c.WaitHost("hh0", waitLong, "health Critical", healthIs(wire.HardwareCritical, "power supply PSU 1: Critical"))
	mfs, err := r.a.cfg.Metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if l.GetValue() == "hh0" {
					t.Errorf("%s names the host", mf.GetName())
				}
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetGauge() != nil:
				got[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				got[key] = m.GetCounter().GetValue()
			}
		}
	}
	for k, v := range map[string]float64{
		"rackfence_agent_hosts_health{health=Critical}":                         1,
		"rackfence_agent_hosts_health{health=OK}":                               0,
		"rackfence_agent_hardware_components{health=Critical,kind=powerSupply}": 1,
		"rackfence_agent_temperature_max_celsius{}":                             42,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if got["rackfence_agent_health_reads_total{result=ok}"] < 2 {
		t.Errorf("health reads %v", got["rackfence_agent_health_reads_total{result=ok}"])
	}

	if err := sim.SetKnobs(0, bmcsim.Knobs{}); err != nil {
		t.Fatal(err)
	}
	c.WaitHost("hh0", waitLong, "health OK again", healthIs(wire.HardwareOK, ""))
	if again := c.Host("hh0").Status.Health; again.Since.Before(first.Since) || len(again.Problems) > 0 {
		t.Fatalf("health after repair %+v (first %+v)", again, first)
	}
}

// healthUnknown is called with f.mu held: a coordinator built before
// status.health refuses a report carrying it (400, unknown field; per
// host the field is status.health, per rack hosts[i].status.health).
func (f *faultyCoordinator) healthUnknown(hs []wire.RackHostReport) error {
	if !f.noHealth {
		return nil
	}
	for i, h := range hs {
		if h.Status != nil && h.Status.Health != nil {
			f.healthRefused++
			p := fmt.Sprintf("hosts[%d].status.health", i)
			if len(hs) == 1 && h.Touch == 0 && h.Created == 0 {
				p = "status.health"
			}
			return &client.Error{Status: 400, Code: wire.CodeBadRequest, Field: p, Message: fmt.Sprintf("unknown field %q", p)}
		}
	}
	return nil
}

// TestHealthToAnOlderCoordinator: a coordinator that does not know
// status.health refuses the report carrying it; the agent sends it again
// without the health and leaves it out for a while, so the host's status
// still goes on (registered, inspected, available) and nothing is lost but
// the health.
func TestHealthToAnOlderCoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a simulated BMC for seconds")
	}
	sim, c, r := directRack(t)
	r.coord.mu.Lock()
	r.coord.noHealth = true
	r.coord.mu.Unlock()
	h := fakeHost("old0", "r1", 0)
	h.BMC.Address, h.BootMACAddress, h.Online = sim.Address(0), sim.MAC(0), false
	c.Apply(h)
	c.WaitHost("old0", waitLong, "available", stateIs(wire.StateAvailable, wire.OpOK))
	r.coord.mu.Lock()
	refused := r.coord.healthRefused
	r.coord.mu.Unlock()
	if refused == 0 {
		t.Fatal("no report carried the health (the agent read none?)")
	}
	if st := c.Host("old0").Status; st.Health != nil {
		t.Fatalf("the coordinator holds health %+v", st.Health)
	}
}
