package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rackfence/rackfence/coordinator/bench"
)

// runFleet fills in the fleet run's directories, runs it and prints its
// figures beside the goals of issue 16.
func runFleet(ctx context.Context, cfg bench.FleetConfig, emit func(map[string]any, string)) {
	if cfg.Bin == "" {
		exe, err := os.Executable()
		if err != nil {
			fail(fmt.Errorf("--bin: %w", err))
		}
		cfg.Bin = filepath.Dir(exe)
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "rackfence-fleet.")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	} else if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		fail(fmt.Errorf("--dir: %w", err))
	}
	start := time.Now()
	cfg.Progress = func(s string) { fmt.Fprintf(os.Stderr, "fleet %5.0fs %s\n", time.Since(start).Seconds(), s) }
	r, err := bench.Fleet(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fleet: process logs in %s (kept: pass --dir to keep them after a failure)\n", cfg.Dir)
		fail(err)
	}
	perHost := func(kib int64) float64 { return float64(kib) * 1024 / float64(r.Hosts) }
	cpuPer1k := 100 * r.SteadyCPU / (float64(r.Hosts) / 1000)
	emit(map[string]any{"hosts": r.Hosts, "racks": r.Racks, "availableSeconds": r.Available.Seconds(),
		"detachP50ms": ms(r.DetachP50), "detachP99ms": ms(r.DetachP99), "detachMaxms": ms(r.DetachMax),
		"steadyCPUCore": r.SteadyCPU, "steadyCPUPercentPer1000Hosts": cpuPer1k, "steadyWritesPerSecond": r.SteadyWrites,
		"coordRSSPeakKiB": r.CoordRSSPeak, "coordRSSAvailableKiB": r.CoordRSSAvailable, "coordRSSSteadyKiB": r.CoordRSSSteady,
		"agentRSSMeanKiB": r.AgentRSSMean, "agentRSSMaxKiB": r.AgentRSSMax, "simRSSMeanKiB": r.SimRSSMean,
		"connsPerAgentMax": r.ConnsPerAgentMax, "connsPerAgentMean": r.ConnsPerAgentMean, "coordGoroutines": r.CoordGoroutines, "cpuToAvailableCoordSeconds": r.CPUToAvailableCoord,
		"cpuToAvailableAgentsSeconds": r.CPUToAvailableAgents, "cpuToAvailableSimsSeconds": r.CPUToAvailableSims, "coordHeapInuseBytes": r.CoordHeapInuse},
		fmt.Sprintf(`fleet: %d hosts, %d racks (%d agent processes), %d bmcsim processes, status refresh %s
  all available after      %6.1f s            (goal ≤ 30 s)
  CPU used until then      coordinator %.1f s, agents %.1f s, bmcsims %.1f s (%.2f cores over the wait)
  detach → ack             p50 %5.1f ms  p99 %5.1f ms  max %5.1f ms   (goal p99 ≤ 50 ms)
  steady coordinator CPU   %5.1f %% of a core = %.2f %% per 1,000 hosts at %.0f writes/s   (goal ≤ 5 %% at 10,000 hosts)
  coordinator RSS          peak while registering %d KiB (%.0f B/host), all available %d KiB (%.0f B/host), steady %d KiB (%.0f B/host)   (goal ≤ 8192 B/host)
  coordinator Go heap      %.0f KiB in use at steady state (%.0f B/host)
  coordinator goroutines   %.0f
  agent RSS                mean %d KiB, max %d KiB;  bmcsim RSS mean %d KiB
  connections per agent    max %d, mean %.1f   (goal ≤ 4)`,
			r.Hosts, r.Racks, r.Racks, cfg.Sims, cfg.StatusRefresh, r.Available.Seconds(),
			r.CPUToAvailableCoord, r.CPUToAvailableAgents, r.CPUToAvailableSims,
			(r.CPUToAvailableCoord+r.CPUToAvailableAgents+r.CPUToAvailableSims)/r.Available.Seconds(),
			ms(r.DetachP50), ms(r.DetachP99), ms(r.DetachMax),
			100*r.SteadyCPU, cpuPer1k, r.SteadyWrites,
			r.CoordRSSPeak, perHost(r.CoordRSSPeak), r.CoordRSSAvailable, perHost(r.CoordRSSAvailable), r.CoordRSSSteady, perHost(r.CoordRSSSteady),
			r.CoordHeapInuse/1024, r.CoordHeapInuse/float64(r.Hosts), r.CoordGoroutines, r.AgentRSSMean, r.AgentRSSMax, r.SimRSSMean, r.ConnsPerAgentMax, r.ConnsPerAgentMean))
}
