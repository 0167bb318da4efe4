package bmc

import (
	"context"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestGetsPerRegistration counts, on the simulator, the Redfish GETs of
// what the direct provisioner asks between registration and available
// (power read, details, inventory) on one Conn: no document is read twice
// (the manager Details read serves the first inventory), and a service
// expanding several levels has its inventory read in one GET of the
// system, one expanding one level (iLO) the system and each collection
// expanded, and the virtual media collection is read expanded (its
// devices inline), where one without it has every collection and member
// read once. A second
// inventory (re-inspection) reads the system and the manager again.
func TestGetsPerRegistration(t *testing.T) {
	for _, c := range []struct {
		profile  string
		expand   string // the $expand inventory reads the system with ("" : plainly)
		expanded int    // expanded GETs
		max      int    // GETs from dial to the first inventory
	}{
		{"default", ".($levels=3)", 2, 5}, // the system and the virtual media collection
		{"ilo", "", 5, 10},                // one level: the system plainly, each collection expanded
		{"no-vmedia", "", 0, 40},
	} {
		t.Run(c.profile, func(t *testing.T) {
			sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: c.profile})
			ctx, conn, bd := registered(t, sim)
			hw, err := conn.Inventory(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(hw.CPUs) == 0 || len(hw.NICs) == 0 || hw.MemoryMiB == 0 {
				t.Fatalf("inventory %+v: CPUs, NICs or memory missing", hw)
			}
			st := sim.State(0)
			total, expanded := 0, 0
			for p, n := range st.Gets {
				total += n
				if strings.Contains(p, "?$expand=") {
					expanded += n
				}
				if n > 1 {
					t.Errorf("%s read %d times from dial to the first inventory, want once (all GETs: %v)", p, n, st.Gets)
				}
			}
			if expanded != c.expanded {
				t.Errorf("%d expanded GETs, want %d (all GETs: %v)", expanded, c.expanded, st.Gets)
			}
			if total > c.max {
				t.Errorf("%d GETs from dial to the first inventory, want at most %d: %v", total, c.max, st.Gets)
			}
			t.Logf("%s: %d GETs (%d expanded): %v", c.profile, total, expanded, st.Gets)

			// Re-inspection reads afresh.
			if _, err := conn.Inventory(ctx); err != nil {
				t.Fatal(err)
			}
			after := sim.State(0).Gets
			if after[bd.Manager] != st.Gets[bd.Manager]+1 {
				t.Errorf("second inventory: %s read %d times in all, want %d (read again)", bd.Manager, after[bd.Manager], st.Gets[bd.Manager]+1)
			}
			sys := bd.System
			if c.expand != "" {
				sys = bd.System + "?$expand=" + c.expand
			}
			if after[sys] != st.Gets[sys]+1 {
				t.Errorf("second inventory: %s read %d times in all, want %d (read again)", sys, after[sys], st.Gets[sys]+1)
			}
		})
	}
}

// TestInventoryReadsAfreshWhenKeptDocumentsAreOld: the system and manager
// documents read at registration serve an inventory only within
// inventoryReuse; older, they are read again.
func TestInventoryReadsAfreshWhenKeptDocumentsAreOld(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: "no-vmedia"})
	ctx, conn, bd := registered(t, sim)
	before := sim.State(0).Gets
	conn.mu.Lock()
	conn.invSys.at = conn.invSys.at.Add(-inventoryReuse)
	conn.invMgr.at = conn.invMgr.at.Add(-inventoryReuse)
	conn.mu.Unlock()
	if _, err := conn.Inventory(ctx); err != nil {
		t.Fatal(err)
	}
	after := sim.State(0).Gets
	for _, p := range []string{bd.System, bd.Manager} {
		if after[p] != before[p]+1 {
			t.Errorf("%s read %d times, then %d after an inventory with the kept documents %s old: want it read again", p, before[p], after[p], inventoryReuse)
		}
	}
}

// registered dials the simulator's first BMC and does what registration
// does before inspection (a power read, then Details); the Conn closes at
// the test's end.
func registered(t *testing.T, sim *bmcsim.Sim) (context.Context, *Conn, *wire.BMCDetails) {
	t.Helper()
	ctx := testCtx(t)
	conn, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(ctx) })
	if _, err := conn.PowerState(ctx); err != nil {
		t.Fatal(err)
	}
	bd, err := conn.Details(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, conn, bd
}
