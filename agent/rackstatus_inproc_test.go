package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestInProcessStatusPerRack: with every host available and unchanged, the
// agent refreshes their statuses with touches carried by a few per-rack
// requests (not one write per host): no full status goes out, lastUpdated
// moves on the coordinator while modifiedIndex stays.
func TestInProcessStatusPerRack(t *testing.T) {
	const hosts = 20
	c, r, _ := newRack(t, agentOpts{refresh: time.Second})
	names := make([]string, hosts)
	for i := range names {
		names[i] = fmt.Sprintf("p%02d", i)
		c.Apply(fakeHost(names[i], "r1", i))
	}
	for _, n := range names {
		c.WaitHost(n, waitLong, "available", stateIs(wire.StateAvailable, wire.OpOK))
	}
	// Steady: every host touched at least twice since the last full write.
	before := map[string]int{}
	testenv.Eventually(t, waitLong, "every host touched twice", func() error {
		for _, n := range names {
			_, tc := r.coord.rackCounts(n)
			if tc < 2 {
				return fmt.Errorf("%s touched %d times", n, tc)
			}
		}
		return nil
	})
	if touches, writes := r.coord.unnamedCounts(); touches+writes != 0 {
		t.Fatalf("%d touches and %d full writes named no createdIndex", touches, writes)
	}
	first := map[string]wire.Host{}
	for _, n := range names {
		first[n] = *c.Host(n)
		_, tc := r.coord.rackCounts(n)
		before[n] = len(r.coord.written(n)) - tc
	}
	reports0, _ := r.coord.rackCounts("")
	touches0 := 0
	for _, n := range names {
		_, tc := r.coord.rackCounts(n)
		touches0 += tc
	}
	time.Sleep(3 * time.Second) // three refresh periods
	reports1, _ := r.coord.rackCounts("")
	touches1 := 0
	for _, n := range names {
		_, tc := r.coord.rackCounts(n)
		touches1 += tc
		if w := len(r.coord.written(n)) - tc; w != before[n] {
			t.Errorf("%s: %d full status writes while unchanged, want touches only", n, w-before[n])
		}
		h := c.Host(n)
		if h.ModifiedIndex != first[n].ModifiedIndex || !h.Status.LastUpdated.After(first[n].Status.LastUpdated) {
			t.Errorf("%s: modifiedIndex %d → %d, lastUpdated %s → %s: want the same index, a later time", n,
				first[n].ModifiedIndex, h.ModifiedIndex, first[n].Status.LastUpdated, h.Status.LastUpdated)
		}
	}
	reports, touches := reports1-reports0, touches1-touches0
	t.Logf("%d hosts, 3 s at a 1 s refresh: %d touches in %d requests", hosts, touches, reports)
	if touches < hosts || reports == 0 || reports*4 > touches {
		t.Fatalf("%d touches in %d requests: want every host touched, at least 4 hosts per request on average", touches, reports)
	}
}

// TestInProcessStatusPerHostOnOlderCoordinator: a coordinator without the
// rack endpoint (404) gets per-host writes, refreshes included.
func TestInProcessStatusPerHostOnOlderCoordinator(t *testing.T) {
	c, r, _ := newRack(t, agentOpts{refresh: time.Second})
	r.coord.refuseRackStatus(true)
	c.Apply(fakeHost("o1", "r1", 0))
	c.WaitHost("o1", waitLong, "available", stateIs(wire.StateAvailable, wire.OpOK))
	n := len(r.coord.written("o1"))
	testenv.Eventually(t, waitLong, "a per-host refresh", func() error {
		if w := len(r.coord.written("o1")); w < n+2 {
			return fmt.Errorf("%d per-host writes", w)
		}
		return nil
	})
	if reports, touches := r.coord.rackCounts("o1"); reports != 0 || touches != 0 {
		t.Fatalf("%d rack reports, %d touches accepted from an older coordinator", reports, touches)
	}
}

// TestInProcessStatusPerRackOnCoordinatorWithoutCreated: a coordinator
// with the rack endpoint but built before a host's createdIndex in rack
// reports refuses a report naming it (400, unknown field); the agent
// sends it again without the field and leaves the field out from then
// on, so its hosts come up as before.
func TestInProcessStatusPerRackOnCoordinatorWithoutCreated(t *testing.T) {
	c, r, _ := newRack(t, agentOpts{refresh: time.Second})
	r.coord.refuseCreated()
	c.Apply(fakeHost("o1", "r1", 0))
	c.Apply(fakeHost("o2", "r1", 1))
	for _, n := range []string{"o1", "o2"} {
		c.WaitHost(n, waitLong, "available", stateIs(wire.StateAvailable, wire.OpOK))
	}
	if n := r.coord.createdRefusals(); n != 1 {
		t.Fatalf("%d reports refused for naming a createdIndex, want 1 (then none named it)", n)
	}
	if reports, _ := r.coord.rackCounts("o1"); reports == 0 {
		t.Fatal("no rack report went out")
	}
}
