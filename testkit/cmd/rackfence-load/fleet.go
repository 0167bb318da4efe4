package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rackfence/rackfence/testkit/bench"
)

// fleetOutput is where a fleet run's report and plot go ("" = not written).
type fleetOutput struct{ report, plot string }

// runFleet fills in the fleet run's directories, runs it, prints its
// figures beside the fleet goals (FleetResult.Figures) and writes the
// report and plot.
func runFleet(ctx context.Context, cfg bench.FleetConfig, out fleetOutput, emit func(map[string]any, string)) {
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
	if err := writeFleetFiles(r, out); err != nil {
		fail(err)
	}
	var text strings.Builder
	_ = bench.WriteFleetText(&text, r)
	emit(fleetJSON(r), strings.TrimRight(text.String(), "\n"))
}

// writeFleetFiles writes the plot, then the report that points at it.
func writeFleetFiles(r bench.FleetResult, out fleetOutput) error {
	if out.plot != "" {
		if err := writeFile(out.plot, func(f *os.File) error { return bench.WriteFleetPlot(f, r) }); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	if out.report != "" {
		rel := ""
		if out.plot != "" {
			rel = out.plot
			if p, err := filepath.Rel(filepath.Dir(out.report), out.plot); err == nil {
				rel = p
			}
		}
		cmd := "rackfence-load " + strings.Join(os.Args[1:], " ")
		if err := writeFile(out.report, func(f *os.File) error { return bench.WriteFleetMarkdown(f, r, cmd, rel) }); err != nil {
			return fmt.Errorf("--report: %w", err)
		}
	}
	return nil
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fleetJSON is the -o json object of a fleet run.
func fleetJSON(r bench.FleetResult) map[string]any {
	perHost := r.PerHost
	samples := make([]map[string]any, 0, len(r.Samples))
	for _, x := range r.Samples {
		samples = append(samples, map[string]any{"seconds": x.At.Seconds(), "available": x.Available, "coordRSSKiB": x.RSSKiB, "coordHeapInuseBytes": x.HeapBytes})
	}
	return map[string]any{"hosts": r.Hosts, "prefill": r.Prefill, "racks": r.Racks, "sims": r.Sims, "tls": r.TLS, "statusRefreshSeconds": r.StatusRefresh.Seconds(),
		"availableSeconds": r.Available.Seconds(),
		"detachP50ms":      ms(r.DetachP50), "detachP99ms": ms(r.DetachP99), "detachMaxms": ms(r.DetachMax), "detaches": r.Detaches,
		"steadyCPUCore": r.SteadyCPU, "steadyWindowSeconds": r.SteadyWindow.Seconds(), "steadyCPUPercentPer1000Hosts": r.SteadyCPUPer1000(), "steadyWritesPerSecond": r.SteadyWrites,
		"steadyRaftEntriesPerSecond": r.SteadyEntries,
		"coordRSSPeakKiB":            r.CoordRSSPeak, "coordRSSAvailableKiB": r.CoordRSSAvailable, "coordRSSSteadyKiB": r.CoordRSSSteady,
		"coordRSSPeakBytesPerHost": perHost(r.CoordRSSPeak), "coordRSSSteadyBytesPerHost": perHost(r.CoordRSSSteady),
		"coordHeapPeakBytes": r.CoordHeapPeak, "coordHeapInuseBytes": r.CoordHeapInuse,
		"coordHeapPeakBytesPerHost": r.HeapPerHost(r.CoordHeapPeak), "coordHeapSteadyBytesPerHost": r.HeapPerHost(r.CoordHeapInuse),
		"agentRSSMeanKiB": r.AgentRSSMean, "agentRSSMaxKiB": r.AgentRSSMax, "simRSSMeanKiB": r.SimRSSMean,
		"connsPerAgentMax": r.ConnsPerAgentMax, "connsPerAgentMean": r.ConnsPerAgentMean, "coordGoroutines": r.CoordGoroutines,
		"cpuToAvailableCoordSeconds": r.CPUToAvailableCoord, "cpuToAvailableAgentsSeconds": r.CPUToAvailableAgents,
		"cpuToAvailableSimsSeconds": r.CPUToAvailableSims, "cores": r.Cores, "fleetNice": r.FleetNice, "leaseLosses": r.LeaseLosses,
		"redfishToAvailable": map[string]any{"requests": r.BMCToAvailable.Requests, "bytesOut": r.BMCToAvailable.BytesOut,
			"connections": r.BMCToAvailable.Connections, "logins": r.BMCToAvailable.Logins, "byCall": r.BMCToAvailable.ByCall},
		"loadWait":   map[string]any{"steal": r.LoadWait.Steal, "otherCores": r.LoadWait.OtherCores},
		"loadSteady": map[string]any{"steal": r.LoadSteady.Steal, "otherCores": r.LoadSteady.OtherCores}, "agentCPUPerHostms": ms(r.AgentCPUPerHost()), "samples": samples}
}
