package bench

import (
	"context"
	"fmt"
	"time"
)

// Prefill: a coordinator's inventory larger than the fleet its agents
// bring up. This machine cannot bring 100,000 hosts up in one run (their
// agents and simulators need about ten times the CPU its two cores give in
// the time), yet the operator figures at 100,000 hosts (the coordinator's
// memory with clients listing every host, a whole list's latency, detach →
// ack) depend on the coordinator's inventory, not on how its hosts came.
// With FleetConfig.Prefill the run creates that many hosts through the API
// before any agent starts (Fill: racks fill-NNN of prefillPerRack hosts,
// each with a status carrying hardware details, as an agent reports), then
// brings its own fleet up beside them. The prefilled hosts have no agent:
// their racks' leases, held by the load tool, expire after Fill's TTL, and
// nothing writes their statuses again, so the steady status traffic is the
// fleet's alone (say so beside any figure).

// prefillPerRack is the prefilled racks' size, the fleet runs' usual one.
const prefillPerRack = 1000

// prefill creates cfg.Prefill hosts and records the host count per state
// they leave, which the samples then leave out.
func (f *fleet) prefill(ctx context.Context) error {
	n := f.cfg.Prefill
	f.say("prefill: creating %d hosts without agents (racks fill-NNN of %d)", n, prefillPerRack)
	start := time.Now()
	err := Fill(ctx, NewHTTPClientFor(64, f.token), f.coordURL, f.token, n, prefillPerRack, 64, func(done int) {
		f.say("  prefill: %d hosts (%.0f/s)", done, float64(done)/time.Since(start).Seconds())
	})
	if err != nil {
		return fmt.Errorf("prefill of %d hosts: %w", n, err)
	}
	x, states := f.sample(time.Now())
	if states == nil || x.Registered != n {
		return fmt.Errorf("prefill of %d hosts: the coordinator's /metrics count %d hosts after it", n, x.Registered)
	}
	f.prefilled = states
	f.say("prefill: %d hosts in %.1f s", n, time.Since(start).Seconds())
	return nil
}

// withoutPrefill takes the prefilled hosts' counts out of a sample's
// states, leaving the fleet's own hosts (states with none left out).
func withoutPrefill(states, prefilled map[string]int) map[string]int {
	if states == nil || len(prefilled) == 0 {
		return states
	}
	out := make(map[string]int, len(states))
	for st, n := range states {
		if n -= prefilled[st]; n != 0 {
			out[st] = n
		}
	}
	return out
}
