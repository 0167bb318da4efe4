// Command rackfence-chaos runs rackfence's partition harness
// (testkit/chaos): a three-member coordinator cluster, two racks of
// agents and simulated BMCs, each in its own network namespace, a seeded
// fault schedule, an operator workload, and the fencing, linearizability,
// durability and liveness checkers. It prints the run directory (logs, BMC
// audits, lease history, recorded history, result.json) and a summary, and
// exits 1 when a checker found a violation, 2 when the run could not be
// carried out. Needs root, ip (iproute2) and nft (nftables).
//
//	rackfence-chaos --seed 7 --duration 5m [--bmc-account-rotation] [--dir DIR] [--bin DIR]
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/testkit/chaos"
)

func main() {
	var c Config
	os.Exit(daemon.Program{
		Name: "rackfence-chaos", Flags: c.flags(), Validate: c.Validate,
		Run: func(ctx context.Context, _ *slog.Logger) error { return run(ctx, c) },
	}.Main(os.Args[1:]))
}

// cannot is the exit of a run that could not be carried out (2).
func cannot(format string, a ...any) error {
	return daemon.Exit(daemon.ExitUsage, fmt.Errorf(format, a...))
}

func run(ctx context.Context, c Config) error {
	if c.total != "" {
		rs, err := chaos.ReadResults(c.total)
		if err != nil || len(rs) == 0 {
			return cannot("--total %s: no DIR/seed-N/result.json there (%v)", c.total, err)
		}
		fmt.Print(chaos.Total(rs))
		return nil
	}
	if ok, why := chaos.Available(); !ok {
		return cannot("%s: run as root with iproute2 and nftables installed (sudo deploy/peers/install.sh)", why)
	}
	if c.bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return cannot("%v", err)
		}
		c.bin = filepath.Dir(exe)
	}
	for _, b := range []string{"rackfence-coordinator", "rackfence-agent", "rackfence-bmcsim"} {
		if _, err := os.Stat(filepath.Join(c.bin, b)); err != nil {
			return cannot("--bin %s: no %s there: run make build, or point --bin at the binaries", c.bin, b)
		}
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "rackfence-chaos-")
		if err != nil {
			return cannot("%v", err)
		}
		c.dir = d
	}
	var results []*chaos.Result
	defer func() {
		if len(results) > 1 {
			fmt.Print(chaos.Total(results))
		}
	}()
	violated := false
	for s := c.seed; s < c.seed+int64(c.seeds); s++ {
		rd := filepath.Join(c.dir, fmt.Sprintf("seed-%d", s))
		fmt.Printf("run directory: %s\n", rd)
		res, err := chaos.Run(ctx, chaos.Config{Seed: s, Duration: c.duration, Dir: rd, Bin: c.bin, Topo: c.topo, Clients: c.clients, FinalOutage: c.finalOutage, Faults: c.faults, BMCAccountRotation: c.rotation})
		if err != nil {
			return cannot("seed %d: the run could not be carried out: %v (logs in %s)", s, err, rd)
		}
		fmt.Print(res.Summary())
		results = append(results, res)
		violated = violated || !res.OK()
		if ctx.Err() != nil {
			break
		}
	}
	if violated {
		return daemon.Exit(daemon.ExitFailed, nil)
	}
	return nil
}
