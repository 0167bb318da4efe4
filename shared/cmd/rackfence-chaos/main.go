// Command rackfence-chaos runs rackfence's partition harness
// (shared/testenv/chaos): a three-member coordinator cluster, two racks of
// agents and simulated BMCs, each in its own network namespace, a seeded
// fault schedule, an operator workload, and the fencing, linearizability,
// durability and liveness checkers. It prints the run directory (logs, BMC
// audits, lease history, recorded history, result.json) and a summary, and
// exits 1 when a checker found a violation, 2 when the run could not be
// carried out. Needs root, ip (iproute2) and nft (nftables).
//
//	rackfence-chaos --seed 7 --duration 5m [--dir DIR] [--bin DIR]
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/envflag"
	"github.com/rackfence/rackfence/shared/testenv/chaos"
)

func main() { os.Exit(run()) }

func run() int {
	fs := pflag.NewFlagSet("rackfence-chaos", pflag.ContinueOnError)
	seed := fs.Int64("seed", 1, "seed of the fault schedule and the workload (same seed, same schedule)")
	seeds := fs.Int("seeds", 1, "run this many seeds in a row: seed, seed+1, …")
	dur := fs.Duration("duration", 5*time.Minute, "how long the workload and faults run (the final heal, convergence and checks come after)")
	dir := fs.String("dir", "", "parent of the run directories (default: a new directory under $TMPDIR)")
	bin := fs.String("bin", "", "directory holding rackfence-coordinator, rackfence-agent and rackfence-bmcsim (default: this program's directory)")
	clients := fs.Int("clients", 3, "concurrent operator clients")
	hosts := fs.Int("hosts-per-rack", 4, "hosts (simulated BMCs) per rack")
	ttl := fs.Duration("lease-ttl", 5*time.Second, "agents' --lease-ttl")
	outage := fs.Duration("final-outage", 0, "end each run with an outage this long (every agent cut off the coordinators, the leader killed) before the final heal, so convergence is measured from it (0: off)")
	total := fs.String("total", "", "print the totals of the runs kept under this directory (a --dir of earlier runs) and exit")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := envflag.Apply(fs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if *total != "" {
		rs, err := chaos.ReadResults(*total)
		if err != nil || len(rs) == 0 {
			fmt.Fprintf(os.Stderr, "--total %s: no DIR/seed-N/result.json there (%v)\n", *total, err)
			return 2
		}
		fmt.Print(chaos.Total(rs))
		return 0
	}
	if *dur < 20*time.Second {
		fmt.Fprintf(os.Stderr, "--duration %s: use at least 20s (faults start at 3 s and none starts in the last 5 s)\n", *dur)
		return 2
	}
	if *seeds < 1 || *clients < 1 || *hosts < 1 || *ttl < time.Second {
		fmt.Fprintln(os.Stderr, "--seeds, --clients and --hosts-per-rack must be at least 1, --lease-ttl at least 1s")
		return 2
	}
	if ok, why := chaos.Available(); !ok {
		fmt.Fprintf(os.Stderr, "rackfence-chaos: %s: run as root with iproute2 and nftables installed (sudo deploy/peers/install.sh)\n", why)
		return 2
	}
	if *bin == "" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		*bin = filepath.Dir(exe)
	}
	for _, b := range []string{"rackfence-coordinator", "rackfence-agent", "rackfence-bmcsim"} {
		if _, err := os.Stat(filepath.Join(*bin, b)); err != nil {
			fmt.Fprintf(os.Stderr, "--bin %s: no %s there: run make build, or point --bin at the binaries\n", *bin, b)
			return 2
		}
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "rackfence-chaos-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		*dir = d
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	topo := chaos.DefaultTopology()
	topo.HostsPerRack, topo.LeaseTTL = *hosts, *ttl
	code := 0
	var results []*chaos.Result
	defer func() {
		if len(results) > 1 {
			fmt.Print(chaos.Total(results))
		}
	}()
	for s := *seed; s < *seed+int64(*seeds); s++ {
		rd := filepath.Join(*dir, fmt.Sprintf("seed-%d", s))
		fmt.Printf("run directory: %s\n", rd)
		res, err := chaos.Run(ctx, chaos.Config{Seed: s, Duration: *dur, Dir: rd, Bin: *bin, Topo: topo, Clients: *clients, FinalOutage: *outage})
		if err != nil {
			fmt.Fprintf(os.Stderr, "seed %d: the run could not be carried out: %v (logs in %s)\n", s, err, rd)
			return 2
		}
		fmt.Print(res.Summary())
		results = append(results, res)
		if !res.OK() {
			code = 1
		}
		if ctx.Err() != nil {
			break
		}
	}
	return code
}
