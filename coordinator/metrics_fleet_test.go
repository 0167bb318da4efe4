package coordinator

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// fakeClock is a settable clock for the age tracker.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A real FSM, driven by encoded commands, is counted per rack, per state,
// per pending intent and per pivot; ages grow with the clock and reset
// when an intent is acknowledged.
func TestFleetMetrics(t *testing.T) {
	h := newFSMT(t)
	clk := &fakeClock{t: t0}
	c := newFleetCollector(h.f, clk.now)

	h.ok(fsm.PutHostCmd{Host: host("h1", "r1"), Time: t0})
	h.ok(fsm.PutHostCmd{Host: host("h2", "r1"), Time: t0})
	h.ok(fsm.PutHostCmd{Host: host("h3", "r2"), Time: t0})
	in := host("h4", "r3")
	in.Handoff = &wire.Handoff{SourceTier: "a", SourceClusterID: "cid", DetachIndex: 7, Confirmed: true}
	h.ok(fsm.PutHostCmd{Host: in, Time: t0})

	l1 := h.ok(fsm.LeaseAcquireCmd{Rack: "r1", Holder: "a1", TTL: time.Minute, Time: t0}).(wire.Lease)
	l2 := h.ok(fsm.LeaseAcquireCmd{Rack: "r2", Holder: "a2", TTL: time.Minute, Time: t0}).(wire.Lease)
	h.ok(fsm.LeaseReleaseCmd{Rack: "r2", Holder: "a2", Epoch: l2.Epoch, Time: t0})
	h.ok(fsm.StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l1.Epoch, Status: wire.HostStatus{
		ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpError, ErrorType: wire.ErrRegistration, ErrorCount: 1}}, Time: t0})
	h.ok(fsm.StatusCmd{Rack: "r1", Name: "h2", Report: wire.StatusReport{Epoch: l1.Epoch, Status: wire.HostStatus{
		ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK}}, Time: t0})
	det := h.ok(fsm.PutIntentCmd{Name: "h2", Kind: wire.IntentDetach, Intent: wire.Intent{Reason: "pivot to b"}}).(wire.Intent)
	h.ok(fsm.PutIntentCmd{Name: "h3", Kind: wire.IntentDrain, Intent: wire.Intent{Mode: wire.DrainMaintenance}})

	want := func(detachAge, drainAge, pendingDetach, srcAge float64) string {
		return fmt.Sprintf(`
# HELP rackfence_hosts_error Hosts whose operational status is error, by rack and error type (only racks with such hosts).
# TYPE rackfence_hosts_error gauge
rackfence_hosts_error{error_type="registration error",rack="r1"} 1
# HELP rackfence_hosts_operational Hosts by operational status (none = no status reported yet).
# TYPE rackfence_hosts_operational gauge
rackfence_hosts_operational{status="error"} 1
rackfence_hosts_operational{status="none"} 2
rackfence_hosts_operational{status="ok"} 1
# HELP rackfence_rack_hosts Hosts of the rack (every rack with hosts or a lease history).
# TYPE rackfence_rack_hosts gauge
rackfence_rack_hosts{rack="r1"} 2
rackfence_rack_hosts{rack="r2"} 1
rackfence_rack_hosts{rack="r3"} 1
# HELP rackfence_rack_lease_held 1 when the rack's lease is held by an agent, 0 when nobody holds it.
# TYPE rackfence_rack_lease_held gauge
rackfence_rack_lease_held{rack="r1"} 1
rackfence_rack_lease_held{rack="r2"} 0
rackfence_rack_lease_held{rack="r3"} 0
# HELP rackfence_rack_lease_epoch Epoch of the rack's last lease grant (held or ended); it grows with every grant, so changes() counts lease turnovers.
# TYPE rackfence_rack_lease_epoch gauge
rackfence_rack_lease_epoch{rack="r1"} %d
rackfence_rack_lease_epoch{rack="r2"} %d
rackfence_rack_lease_epoch{rack="r3"} 0
# HELP rackfence_intents_unacknowledged Intents no lease holder has acknowledged yet, by kind.
# TYPE rackfence_intents_unacknowledged gauge
rackfence_intents_unacknowledged{kind="detach"} %g
rackfence_intents_unacknowledged{kind="drain"} 1
rackfence_intents_unacknowledged{kind="inspect"} 0
rackfence_intents_unacknowledged{kind="powerOff"} 0
rackfence_intents_unacknowledged{kind="reboot"} 0
rackfence_intents_unacknowledged{kind="resume"} 0
rackfence_intents_unacknowledged{kind="service"} 0
# HELP rackfence_intent_unacknowledged_oldest_seconds Age of the oldest unacknowledged intent of the kind, counted from the first scrape of this member that saw it (0 when none).
# TYPE rackfence_intent_unacknowledged_oldest_seconds gauge
rackfence_intent_unacknowledged_oldest_seconds{kind="detach"} %g
rackfence_intent_unacknowledged_oldest_seconds{kind="drain"} %g
rackfence_intent_unacknowledged_oldest_seconds{kind="inspect"} 0
rackfence_intent_unacknowledged_oldest_seconds{kind="powerOff"} 0
rackfence_intent_unacknowledged_oldest_seconds{kind="reboot"} 0
rackfence_intent_unacknowledged_oldest_seconds{kind="resume"} 0
rackfence_intent_unacknowledged_oldest_seconds{kind="service"} 0
# HELP rackfence_pivots_in_flight Hosts in the middle of a pivot: side source = detached here for a pivot and not yet handed off; destination = handed to this tier and not yet adopted.
# TYPE rackfence_pivots_in_flight gauge
rackfence_pivots_in_flight{side="destination"} 1
rackfence_pivots_in_flight{side="source"} 1
# HELP rackfence_pivot_oldest_seconds Age of the oldest pivot in flight on the side, counted from the first scrape of this member that saw it (0 when none).
# TYPE rackfence_pivot_oldest_seconds gauge
rackfence_pivot_oldest_seconds{side="destination"} %g
rackfence_pivot_oldest_seconds{side="source"} %g
`, l1.Epoch, l2.Epoch, pendingDetach, detachAge, drainAge, srcAge, srcAge)
	}
	names := []string{"rackfence_hosts_error", "rackfence_hosts_operational", "rackfence_rack_hosts", "rackfence_rack_lease_held",
		"rackfence_rack_lease_epoch", "rackfence_intents_unacknowledged", "rackfence_intent_unacknowledged_oldest_seconds",
		"rackfence_pivots_in_flight", "rackfence_pivot_oldest_seconds"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want(0, 0, 1, 0)), names...); err != nil {
		t.Fatal(err)
	}
	clk.add(90 * time.Second)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want(90, 90, 1, 90)), names...); err != nil {
		t.Fatal(err)
	}
	// The holder acknowledges the detach: it leaves the pending set (its
	// age with it); the pivot stays in flight until it is handed off.
	h.ok(fsm.StatusCmd{Rack: "r1", Name: "h2", Report: wire.StatusReport{Epoch: l1.Epoch, Status: wire.HostStatus{
		ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK},
		Acks: []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: det.CreatedIndex}}}, Time: t0})
	clk.add(30 * time.Second)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want(0, 120, 0, 120)), names...); err != nil {
		t.Fatal(err)
	}
	// The handoff is recorded: the source side is done.
	h.ok(fsm.SetPivotedCmd{Name: "h2", To: "b"})
	fl := h.f.Fleet()
	if len(fl.Pivots) != 1 || fl.Pivots[0].Side != fsm.PivotDestination {
		t.Fatalf("pivots after handoff: %+v", fl.Pivots)
	}
}

// The tracker forgets keys that are gone, so a key seen again later
// starts from zero.
func TestAgeTrackerForgets(t *testing.T) {
	clk := &fakeClock{t: t0}
	a := newAgeTracker(clk.now)
	a.observe([]string{"x", "y"})
	clk.add(time.Minute)
	if got := a.observe([]string{"x"}); got[0] != time.Minute {
		t.Fatalf("x: %v", got)
	}
	clk.add(time.Minute)
	if got := a.observe([]string{"x", "y"}); got[0] != 2*time.Minute || got[1] != 0 {
		t.Fatalf("x, y: %v", got)
	}
}

// BenchmarkFleetCollect is one scrape of the fleet metrics over 10,000
// hosts in 100 racks with 1,000 pending intents (the FSM's read lock is
// held for the counting pass).
//
//	go test -run '^$' -bench FleetCollect -benchmem ./coordinator/
func BenchmarkFleetCollect(b *testing.B) {
	f := fsm.NewFSM()
	apply := applier(b, f)
	for r := 0; r < 100; r++ {
		rack := fmt.Sprintf("r%d", r)
		l := apply(fsm.LeaseAcquireCmd{Rack: rack, Holder: "a", TTL: time.Minute, Time: t0}).(wire.Lease)
		for h := 0; h < 100; h++ {
			name := fmt.Sprintf("%s-h%d", rack, h)
			apply(fsm.PutHostCmd{Host: host(name, rack), Time: t0})
			apply(fsm.StatusCmd{Rack: rack, Name: name, Report: wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{
				ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK}}, Time: t0})
			if h%10 == 0 {
				apply(fsm.PutIntentCmd{Name: name, Kind: wire.IntentDetach, Intent: wire.Intent{Reason: "bench"}})
			}
		}
	}
	c := newFleetCollector(f, time.Now)
	ch := make(chan prometheus.Metric, 4096)
	done := make(chan int)
	go func() {
		n := 0
		for range ch {
			n++
		}
		done <- n
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Collect(ch)
	}
	b.StopTimer()
	close(ch)
	b.ReportMetric(float64(<-done)/float64(b.N), "series/scrape")
}
