package bench

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// FleetFigure is one line of a fleet run's figures: what, the value with
// its unit, and the goal it is held against ("" = none).
type FleetFigure struct{ Name, Value, Goal string }

// bigFleet is the size from which the 100,000-host goals apply.
const bigFleet = 100000

// Figures are the run's figures in the order the text and the Markdown
// report print them, each with its goal for the run's size (the
// 100,000-host goals from bigFleet on).
func (r FleetResult) Figures() []FleetFigure {
	cpuAll := r.CPUToAvailableCoord + r.CPUToAvailableAgents + r.CPUToAvailableSims
	cores := 0.0
	if r.Available > 0 {
		cores = cpuAll / r.Available.Seconds()
	}
	goal := func(small, big string) string {
		if r.Hosts >= bigFleet {
			return big
		}
		return small
	}
	return append([]FleetFigure{
		{"all available after", fmt.Sprintf("%.1f s", r.Available.Seconds()), goal("≤ 20 s at 10,000 hosts", "")},
		{"CPU until all available", fmt.Sprintf("coordinator %.1f s, agents %.1f s, bmcsims %.1f s (%.2f cores over the wait)",
			r.CPUToAvailableCoord, r.CPUToAvailableAgents, r.CPUToAvailableSims, cores), ""},
		{"rack leases lost until all available", fmt.Sprintf("%d (agents' logs; each loss writes the rack's hosts again)", r.LeaseLosses), "0"},
		{"agent CPU per host to available", fmt.Sprintf("%.2f ms", float64(r.AgentCPUPerHost().Microseconds())/1000), "≤ 3 ms"},
		{"detach → ack", r.detachFigure(), "p99 ≤ 50 ms at 100,000 hosts"},
		{"steady coordinator CPU", fmt.Sprintf("%.1f %% of a core = %.2f %% per 1,000 hosts (over %s)", 100*r.SteadyCPU, r.SteadyCPUPer1000(), r.SteadyWindow),
			goal("≤ 3 % of a core at 10,000 hosts", "≤ 25 % of a core at 100,000 hosts")},
		{"steady writes", fmt.Sprintf("%.0f commands/s in %.1f Raft entries/s", r.SteadyWrites, r.SteadyEntries), ""},
		{"API requests per host to available", orNone(formatRoutes(r.RequestsToAvailable, float64(r.Hosts), 5)), ""},
		{"Redfish requests per host to available", r.bmcFigure(), ""},
		{"steady API requests/s", orNone(formatRoutes(r.RequestsSteady, r.SteadyWindow.Seconds(), 5)), ""},
		{"coordinator RSS", fmt.Sprintf("peak %d KiB (%.0f B/host), all available %d KiB (%.0f B/host), steady %d KiB (%.0f B/host)",
			r.CoordRSSPeak, r.PerHost(r.CoordRSSPeak), r.CoordRSSAvailable, r.PerHost(r.CoordRSSAvailable),
			r.CoordRSSSteady, r.PerHost(r.CoordRSSSteady)), "peak ≤ 8192 B/host"},
		{"coordinator Go heap in use", fmt.Sprintf("peak %.0f KiB (%.0f B/host), steady %.0f KiB (%.0f B/host)",
			r.CoordHeapPeak/1024, r.HeapPerHost(r.CoordHeapPeak), r.CoordHeapInuse/1024, r.HeapPerHost(r.CoordHeapInuse)), ""},
		{"coordinator goroutines", fmt.Sprintf("%.0f", r.CoordGoroutines), ""},
		{"agent RSS", fmt.Sprintf("mean %d KiB, max %d KiB; bmcsim RSS mean %d KiB", r.AgentRSSMean, r.AgentRSSMax, r.SimRSSMean), ""},
		{"machine besides this run", fmt.Sprintf("%d cores; until all available %s; steady %s", r.Cores, r.LoadWait.String(), r.LoadSteady.String()), ""},
		{"connections per agent", fmt.Sprintf("max %d, mean %.1f", r.ConnsPerAgentMax, r.ConnsPerAgentMean), "≤ 4"},
	}, r.operatorFigures()...)
}

// Title is the run's one-line description.
func (r FleetResult) Title() string {
	sec := "mutual TLS"
	if !r.TLS {
		sec = "plaintext"
	}
	nice := ""
	if r.FleetNice > 0 {
		nice = fmt.Sprintf(", agents and bmcsims at nice %d", r.FleetNice)
	}
	pre := ""
	if r.Prefill > 0 {
		pre = fmt.Sprintf("; the coordinator also held %d prefilled hosts without agents (%d in all; memory per host is of all)", r.Prefill, r.Inventory())
	}
	return fmt.Sprintf("fleet: %d hosts, %d racks (%d agent processes), %d bmcsim processes, one coordinator, %s, status refresh %s%s%s",
		r.Hosts, r.Racks, r.Racks, r.Sims, sec, r.StatusRefresh, nice, pre)
}

// WriteFleetText writes the figures as aligned text lines.
func WriteFleetText(w io.Writer, r FleetResult) error {
	var b strings.Builder
	b.WriteString(r.Title() + "\n")
	for _, x := range r.Figures() {
		fmt.Fprintf(&b, "  %-32s %s", x.Name, x.Value)
		if x.Goal != "" {
			fmt.Fprintf(&b, "   (goal %s)", x.Goal)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFleetMarkdown writes the Markdown report of a run: the setup, the
// figures against their goals, the available count over time, and the
// plot (plotPath, relative to the report, "" = none). command is how the
// run was started, quoted so the report says how to repeat it.
func WriteFleetMarkdown(w io.Writer, r FleetResult, command, plotPath string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# rackfence fleet benchmark: %d hosts\n\n", r.Hosts)
	fmt.Fprintf(&b, "%s.\n\n", strings.TrimPrefix(r.Title(), "fleet: "))
	if command != "" {
		fmt.Fprintf(&b, "Command:\n\n```sh\n%s\n```\n\n", command)
	}
	b.WriteString("| Figure | Value | Goal |\n|---|---|---|\n")
	for _, x := range r.Figures() {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(x.Name), mdCell(x.Value), mdCell(x.Goal))
	}
	b.WriteString("\n## Hosts available over time\n\n")
	if plotPath != "" {
		fmt.Fprintf(&b, "![hosts available over time](%s)\n\n", filepath.ToSlash(plotPath))
	}
	b.WriteString("| Seconds after registration started | Registered | Available | Coordinator RSS (KiB) | Go heap in use (KiB) |\n|---:|---:|---:|---:|---:|\n")
	for _, x := range thin(r.Samples, 20) {
		fmt.Fprintf(&b, "| %.1f | %s | %s | %s | %s |\n", x.At.Seconds(), orDash(float64(x.Registered), "%.0f"), orDash(float64(x.Available), "%.0f"),
			orDash(float64(x.RSSKiB), "%.0f"), orDash(x.HeapBytes/1024, "%.0f"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// thin keeps at most n samples, evenly spread, always the first and last.
func thin(s []FleetSample, n int) []FleetSample {
	if len(s) <= n {
		return s
	}
	out := make([]FleetSample, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s[i*(len(s)-1)/(n-1)])
	}
	return out
}

func orDash(v float64, format string) string {
	if v < 0 {
		return "–"
	}
	return fmt.Sprintf(format, v)
}

// orNone is s, or "not measured" when empty (an older coordinator, or a
// scrape that failed).
func orNone(s string) string {
	if s == "" {
		return "not measured"
	}
	return s
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func (l MachineLoad) String() string {
	if l.Steal < 0 {
		return "unknown"
	}
	return fmt.Sprintf("other processes %.2f cores, steal %.0f %%", l.OtherCores, 100*l.Steal)
}

// detachFigure is the detach → ack line: "not measured" with no detach.
func (r FleetResult) detachFigure() string {
	if r.Detaches == 0 {
		return "not measured (--detaches 0)"
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d detaches", ms(r.DetachP50), ms(r.DetachP99), ms(r.DetachMax), r.Detaches)
}
