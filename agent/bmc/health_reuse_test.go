package bmc

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestHealthTakesTheSessionsSystemDocument: a health read right after
// registration takes the system document discovery read (no GET of the
// system again); one right after an inventory that read the system
// expanded takes that document, storage collection inline, and reads only
// the chassis. Each kept document serves one read: the next health read
// reads the system and the storage again.
func TestHealthTakesTheSessionsSystemDocument(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	ctx, conn, bd := registered(t, sim)
	storage := bd.System + "/Storage?$expand=."
	before := sim.State(0).Gets
	if _, err := conn.Health(ctx); err != nil {
		t.Fatal(err)
	}
	after := sim.State(0).Gets
	if after[bd.System] != before[bd.System] {
		t.Errorf("health after registration read %s again (%d → %d): want discovery's document taken", bd.System, before[bd.System], after[bd.System])
	}

	if _, err := conn.Inventory(ctx); err != nil {
		t.Fatal(err)
	}
	before = sim.State(0).Gets
	h, err := conn.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after = sim.State(0).Gets
	if h.Health == nil || h.Health.Components[wire.HealthStorage] == "" {
		t.Fatalf("health after inventory %+v: no storage component (the inline storage collection not read)", h.Health)
	}
	read := 0
	for p, n := range after {
		read += n - before[p]
	}
	if after[bd.System] != before[bd.System] || after[storage] != before[storage] || read != 1 {
		t.Errorf("health after inventory: %d GETs (system %d → %d, storage %d → %d), want 1 (the chassis): %v",
			read, before[bd.System], after[bd.System], before[storage], after[storage], after)
	}

	before = after
	if _, err := conn.Health(ctx); err != nil {
		t.Fatal(err)
	}
	after = sim.State(0).Gets
	if after[bd.System] != before[bd.System]+1 || after[storage] != before[storage]+1 {
		t.Errorf("second health read: system %d → %d, storage %d → %d: want both read again", before[bd.System], after[bd.System], before[storage], after[storage])
	}
}
