package chaos_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/testenv"
	"github.com/rackfence/rackfence/shared/testenv/chaos"
)

// ciSeeds are the seeds make test runs, 60 s each: two from the start,
// and regression seeds for every violation found and fixed (see
// shared/testenv/chaos/DESIGN.md).
var ciSeeds = []int64{1, 2}

// TestChaosShort is the CI part of make chaos: a short schedule per seed
// against the real binaries in network namespaces, with every checker.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos runs take a minute per seed; not in -short")
	}
	ok, why := chaos.Available()
	testenv.RequirePeer(t, ok, "network namespaces and nftables for the chaos harness: "+why)
	var bin string
	for _, b := range []string{"rackfence-coordinator", "rackfence-agent", "rackfence-bmcsim"} {
		bin = filepath.Dir(testenv.Binary(t, b))
	}
	for _, seed := range ciSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			dir, err := os.MkdirTemp("", fmt.Sprintf("rackfence-chaos-%d-", seed))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			res, err := chaos.Run(ctx, chaos.Config{Seed: seed, Duration: 60 * time.Second, Dir: dir, Bin: bin})
			if err != nil {
				t.Fatalf("run (kept in %s): %v", dir, err)
			}
			t.Log("\n" + res.Summary())
			if res.Ops == 0 || res.Mutations == 0 || len(res.Faults) == 0 {
				t.Fatalf("the run did nothing to check (ops %d, mutations %d, faults %v); kept in %s", res.Ops, res.Mutations, res.Faults, dir)
			}
			if !res.OK() {
				t.Fatalf("%d violations; run kept in %s", len(res.Violations), dir)
			}
			os.RemoveAll(dir)
		})
	}
}
