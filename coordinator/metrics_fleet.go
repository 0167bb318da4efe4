package coordinator

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// fleetCollector reports the FSM's hosts, racks, pending intents and
// pivots at scrape time (deploy/prometheus/ alerts on them). Every member
// reports its own replica, so alert rules aggregate with max by (…).
type fleetCollector struct {
	f    *fsm.FSM
	ages *ageTracker
}

func newFleetCollector(f *fsm.FSM, now func() time.Time) *fleetCollector {
	return &fleetCollector{f: f, ages: newAgeTracker(now)}
}

var (
	hostsDesc = prometheus.NewDesc("rackfence_hosts",
		"Hosts by provisioning state (none = no status reported yet).", []string{"state"}, nil)
	hostsOpDesc = prometheus.NewDesc("rackfence_hosts_operational",
		"Hosts by operational status (none = no status reported yet).", []string{"status"}, nil)
	hostsErrDesc = prometheus.NewDesc("rackfence_hosts_error",
		"Hosts whose operational status is error, by rack and error type (only racks with such hosts).", []string{"rack", "error_type"}, nil)
	leasesDesc    = prometheus.NewDesc("rackfence_leases_held", "Racks whose lease is held.", nil, nil)
	rackHostsDesc = prometheus.NewDesc("rackfence_rack_hosts",
		"Hosts of the rack (every rack with hosts or a lease history).", []string{"rack"}, nil)
	rackHeldDesc = prometheus.NewDesc("rackfence_rack_lease_held",
		"1 when the rack's lease is held by an agent, 0 when nobody holds it.", []string{"rack"}, nil)
	rackEpochDesc = prometheus.NewDesc("rackfence_rack_lease_epoch",
		"Epoch of the rack's last lease grant (held or ended); it grows with every grant, so changes() counts lease turnovers.", []string{"rack"}, nil)
	pendingDesc = prometheus.NewDesc("rackfence_intents_unacknowledged",
		"Intents no lease holder has acknowledged yet, by kind.", []string{"kind"}, nil)
	pendingAgeDesc = prometheus.NewDesc("rackfence_intent_unacknowledged_oldest_seconds",
		"Age of the oldest unacknowledged intent of the kind, counted from the first scrape of this member that saw it (0 when none).", []string{"kind"}, nil)
	pivotsDesc = prometheus.NewDesc("rackfence_pivots_in_flight",
		"Hosts in the middle of a pivot: side source = detached here for a pivot and not yet handed off; destination = handed to this tier and not yet adopted.", []string{"side"}, nil)
	tasksDesc = prometheus.NewDesc("rackfence_bmc_tasks_running",
		"Hosts whose rack agent recorded a long BMC task (firmware, bios, raid, erase) that has not ended, by kind.", []string{"kind"}, nil)
	taskAgeDesc = prometheus.NewDesc("rackfence_bmc_task_oldest_seconds",
		"Age of the oldest recorded BMC task of the kind, from its startedAt (the leader's clock when it was recorded); 0 when none.", []string{"kind"}, nil)
	pivotAgeDesc = prometheus.NewDesc("rackfence_pivot_oldest_seconds",
		"Age of the oldest pivot in flight on the side, counted from the first scrape of this member that saw it (0 when none).", []string{"side"}, nil)
)

var intentKinds = []string{wire.IntentDetach, wire.IntentDrain, wire.IntentResume, wire.IntentReboot, wire.IntentInspect, wire.IntentService, wire.IntentPowerOff}

func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{hostsDesc, hostsOpDesc, hostsErrDesc, leasesDesc, rackHostsDesc, rackHeldDesc,
		rackEpochDesc, pendingDesc, pendingAgeDesc, pivotsDesc, pivotAgeDesc, tasksDesc, taskAgeDesc} {
		ch <- d
	}
}

func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	fl := c.f.Fleet()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for st, n := range fl.ByState {
		gauge(hostsDesc, float64(n), st)
	}
	for st, n := range fl.ByStatus {
		gauge(hostsOpDesc, float64(n), st)
	}
	for k, n := range fl.Errors {
		gauge(hostsErrDesc, float64(n), k.Rack, k.Type)
	}
	gauge(leasesDesc, float64(fl.Leases))
	for name, r := range fl.Racks {
		gauge(rackHostsDesc, float64(r.Hosts), name)
		held := 0.0
		if r.Held {
			held = 1
		}
		gauge(rackHeldDesc, held, name)
		gauge(rackEpochDesc, float64(r.Epoch), name)
	}

	keys := make([]string, 0, len(fl.Pending)+len(fl.Pivots))
	for _, p := range fl.Pending {
		keys = append(keys, "i/"+p.Kind+"/"+p.Host+"/"+strconv.FormatUint(p.CreatedIndex, 10))
	}
	for _, p := range fl.Pivots {
		keys = append(keys, "p/"+p.Side+"/"+p.Host+"/"+strconv.FormatUint(p.Since, 10))
	}
	ages := c.ages.observe(keys)
	count, oldest := map[string]int{}, map[string]time.Duration{}
	for i, p := range fl.Pending {
		count[p.Kind]++
		oldest[p.Kind] = max(oldest[p.Kind], ages[i])
	}
	for _, k := range intentKinds {
		gauge(pendingDesc, float64(count[k]), k)
		gauge(pendingAgeDesc, oldest[k].Seconds(), k)
	}
	count, oldest = map[string]int{}, map[string]time.Duration{}
	for i, p := range fl.Pivots {
		count[p.Side]++
		oldest[p.Side] = max(oldest[p.Side], ages[len(fl.Pending)+i])
	}
	for _, side := range []string{fsm.PivotSource, fsm.PivotDestination} {
		gauge(pivotsDesc, float64(count[side]), side)
		gauge(pivotAgeDesc, oldest[side].Seconds(), side)
	}
	count, oldest = map[string]int{}, map[string]time.Duration{}
	now := c.ages.now()
	for _, t := range fl.Tasks {
		count[t.Kind]++
		oldest[t.Kind] = max(oldest[t.Kind], now.Sub(t.StartedAt))
	}
	for _, k := range wire.BMCTaskKinds {
		gauge(tasksDesc, float64(count[k]), k)
		gauge(taskAgeDesc, oldest[k].Seconds(), k)
	}
}

// ageTracker remembers when each key was first observed. The FSM has no
// wall-clock time for an intent (its createdIndex is a Raft index), so the
// age an alert needs is counted from the first scrape that saw the key: at
// most one scrape interval late, and reset when the member restarts.
type ageTracker struct {
	mu    sync.Mutex
	now   func() time.Time
	first map[string]time.Time
}

func newAgeTracker(now func() time.Time) *ageTracker {
	return &ageTracker{now: now, first: map[string]time.Time{}}
}

// observe returns each key's age and forgets keys no longer present.
func (a *ageTracker) observe(keys []string) []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	seen := make(map[string]time.Time, len(keys))
	out := make([]time.Duration, len(keys))
	for i, k := range keys {
		t, ok := a.first[k]
		if !ok {
			t = now
		}
		seen[k] = t
		out[i] = now.Sub(t)
	}
	a.first = seen
	return out
}
