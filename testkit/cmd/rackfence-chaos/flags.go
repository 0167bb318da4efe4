package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/testkit/chaos"
)

// Bounds and defaults of rackfence-chaos's own flags (the topology's come
// from chaos.DefaultTopology).
const (
	// minDuration leaves room for the schedule: faults start at 3 s and
	// none starts in the last 5 s.
	minDuration     = 20 * time.Second
	defaultDuration = 5 * time.Minute
	defaultClients  = 3
)

// Config is rackfence-chaos's configuration: one field a flag (every flag
// also reads RACKFENCE_<FLAG>).
type Config struct {
	// seed and seeds: run seeds seed .. seed+seeds-1; the same seed gives
	// the same fault schedule and workload.
	seed  int64
	seeds int
	// duration of the workload and faults of one run (the final heal,
	// convergence and checks come after).
	duration time.Duration
	// dir is the parent of the run directories; bin holds the binaries.
	dir, bin string
	// clients is the number of concurrent operator clients.
	clients int
	// topo is the cluster: hosts per rack and the agents' lease TTL are
	// flags, the rest chaos.DefaultTopology.
	topo chaos.Topology
	// finalOutage ends each run with an outage this long (0: off).
	finalOutage time.Duration
	// faults is the set of fault kinds drawn: classic (every earlier
	// seed's schedule), storage (disk full, damaged file at restart,
	// fresh-connection bursts) or all.
	faults string
	// rotation starts the agents with --bmc-account-rotation and adds
	// the bmc-credentials checker.
	rotation bool
	// total, when set, prints the totals of the runs under it and exits.
	total string
}

// flags declares c's flags on a new flag set.
func (c *Config) flags() *pflag.FlagSet {
	c.topo = chaos.DefaultTopology()
	fs := pflag.NewFlagSet("rackfence-chaos", pflag.ContinueOnError)
	fs.Int64Var(&c.seed, "seed", 1, "seed of the fault schedule and the workload (same seed, same schedule)")
	fs.IntVar(&c.seeds, "seeds", 1, "run this many seeds in a row: seed, seed+1, …")
	fs.DurationVar(&c.duration, "duration", defaultDuration, "how long the workload and faults run (the final heal, convergence and checks come after)")
	fs.StringVar(&c.dir, "dir", "", "parent of the run directories (default: a new directory under $TMPDIR)")
	fs.StringVar(&c.bin, "bin", "", "directory holding rackfence-coordinator, rackfence-agent and rackfence-bmcsim (default: this program's directory)")
	fs.IntVar(&c.clients, "clients", defaultClients, "concurrent operator clients")
	fs.IntVar(&c.topo.HostsPerRack, "hosts-per-rack", c.topo.HostsPerRack, "hosts (simulated BMCs) per rack")
	fs.DurationVar(&c.topo.LeaseTTL, "lease-ttl", c.topo.LeaseTTL, "agents' --lease-ttl")
	fs.DurationVar(&c.finalOutage, "final-outage", 0, "end each run with an outage this long (every agent cut off the coordinators, the leader killed) before the final heal, so convergence is measured from it (0: off)")
	fs.StringVar(&c.faults, "faults", chaos.FaultsClassic, "fault kinds to draw: classic (the schedule every earlier seed drew), storage (a coordinator's disk filled, a data file damaged at a restart and the runbook after it, bursts of fresh HTTP/2 connections; data dirs on tmpfs), firmware (the flashing lease holder killed or cut off at 10, 50 or 90 % of a BMC flash; one scenario per seed, --duration unused) or all (the schedule of classic and storage, then the firmware scenario)")
	fs.BoolVar(&c.rotation, "bmc-account-rotation", false, "start every agent with --bmc-account-rotation (the tier's own BMC account, rotated on each takeover) and check that every mutation a BMC accepted used the credentials of the rack's lease holder at that moment, that no account was locked out and that every host ends with a working password on the coordinator (classic, storage and all's schedule; not the firmware scenario)")
	fs.StringVar(&c.total, "total", "", "print the totals of the runs kept under this directory (a --dir of earlier runs) and exit")
	return fs
}

// Validate checks the flags before anything is set up. Every error names
// the flag, what is wrong and what to do.
func (c *Config) Validate() error {
	if c.total != "" {
		return nil
	}
	if c.duration < minDuration {
		return fmt.Errorf("--duration %s: use at least %s (faults start at 3 s and none starts in the last 5 s)", c.duration, minDuration)
	}
	if c.seeds < 1 || c.clients < 1 || c.topo.HostsPerRack < 1 {
		return errors.New("--seeds, --clients and --hosts-per-rack must be at least 1")
	}
	if c.topo.LeaseTTL < time.Second {
		return fmt.Errorf("--lease-ttl %s is too short: use at least 1s (default %s)", c.topo.LeaseTTL, chaos.DefaultTopology().LeaseTTL)
	}
	if _, err := chaos.KindsOf(c.faults); err != nil {
		return fmt.Errorf("--faults: %v", err)
	}
	if c.finalOutage < 0 {
		return fmt.Errorf("--final-outage %s is negative: use 0 (off) or a positive duration", c.finalOutage)
	}
	return nil
}
