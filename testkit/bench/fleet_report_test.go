package bench

import (
	"strings"
	"testing"
	"time"
)

// fleetResult is a made-up run of n hosts with samples every second until
// all were available.
func fleetResult(n int, samples int) FleetResult {
	r := FleetResult{Hosts: n, Racks: 100, Sims: 11, TLS: true, StatusRefresh: time.Minute, SteadyWindow: time.Minute,
		Available: time.Duration(samples-1) * time.Second, DetachP50: 2 * time.Millisecond, DetachP99: 7 * time.Millisecond,
		DetachMax: 9 * time.Millisecond, Detaches: 200, SteadyCPU: 0.17, SteadyWrites: 166, SteadyEntries: 40,
		CoordRSSPeak: 180000, CoordRSSAvailable: 170000, CoordRSSSteady: 160000, CoordHeapPeak: 90e6, CoordHeapInuse: 60e6,
		CPUToAvailableAgents: 116, CPUToAvailableCoord: 20, ConnsPerAgentMax: 2, ConnsPerAgentMean: 1.5,
		Cores: 2, LoadWait: MachineLoad{Steal: 0.04, OtherCores: 0.3}, LoadSteady: MachineLoad{Steal: -1, OtherCores: -1}}
	for i := 0; i < samples; i++ {
		r.Samples = append(r.Samples, FleetSample{At: time.Duration(i) * time.Second, Available: n * i / max(1, samples-1),
			Registered: min(n, 2*n*i/max(1, samples-1)),
			RSSKiB:     int64(100000 + i), HeapBytes: float64(50e6 + i)})
	}
	return r
}

func TestFleetMarkdownReport(t *testing.T) {
	r := fleetResult(10000, 60)
	var b strings.Builder
	if err := WriteFleetMarkdown(&b, r, "rackfence-load fleet --hosts 10000", "fleet.svg"); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"# rackfence fleet benchmark: 10000 hosts\n",
		"mutual TLS",
		"```sh\nrackfence-load fleet --hosts 10000\n```",
		"| all available after | 59.0 s | ≤ 20 s at 10,000 hosts |",
		"| agent CPU per host to available | 11.60 ms | ≤ 3 ms |",
		"| steady coordinator CPU | 17.0 % of a core = 1.70 % per 1,000 hosts (over 1m0s) | ≤ 3 % of a core at 10,000 hosts |",
		"| steady writes | 166 commands/s in 40.0 Raft entries/s |",
		"peak 180000 KiB (18432 B/host)",
		"peak 87891 KiB (9000 B/host), steady 58594 KiB (6000 B/host)",
		"| machine besides this run | 2 cores; until all available other processes 0.30 cores, steal 4 %; steady unknown |",
		"![hosts available over time](fleet.svg)",
		"| 0.0 | 0 | 0 | 100000 | 48828 |",
		"| 59.0 | 10000 | 10000 | 100059 | 48828 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// One table row per figure, 20 sample rows of 60 (first and last kept).
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(line, " | ") == 4 && line[2] >= '0' && line[2] <= '9' {
			rows++
		}
	}
	if rows != 20 {
		t.Errorf("%d sample rows, want 20 (thinned from 60)", rows)
	}
	if n := strings.Count(md, "\n| "); n != len(r.Figures())+1+20+1 {
		t.Errorf("%d table rows, want %d figures + 20 samples + 2 headers", n, len(r.Figures()))
	}
}

func TestFleetGoalsFollowSize(t *testing.T) {
	small, big := fleetResult(10000, 2).Figures(), fleetResult(100000, 2).Figures()
	goal := func(fs []FleetFigure, name string) string {
		for _, f := range fs {
			if f.Name == name {
				return f.Goal
			}
		}
		t.Fatalf("no figure %q", name)
		return ""
	}
	if g := goal(small, "steady coordinator CPU"); !strings.Contains(g, "3 %") {
		t.Errorf("10,000 hosts: CPU goal %q, want 3 %% of a core", g)
	}
	if g := goal(big, "steady coordinator CPU"); !strings.Contains(g, "25 %") {
		t.Errorf("100,000 hosts: CPU goal %q, want 25 %% of a core", g)
	}
	if g := goal(big, "all available after"); g != "" {
		t.Errorf("100,000 hosts: time goal %q, want none (the 30 s goal is 10,000 hosts')", g)
	}
}

func TestFleetTextAndPlaintextTitle(t *testing.T) {
	r := fleetResult(20, 3)
	r.TLS = false
	var b strings.Builder
	if err := WriteFleetText(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if !strings.Contains(lines[0], "plaintext") || len(lines) != 1+len(r.Figures()) {
		t.Errorf("text output:\n%s", b.String())
	}
}

func TestMarkdownCellEscapesPipes(t *testing.T) {
	if got := mdCell("a|b"); got != `a\|b` {
		t.Errorf("mdCell = %q", got)
	}
}

func TestThinKeepsEnds(t *testing.T) {
	var s []FleetSample
	for i := 0; i < 101; i++ {
		s = append(s, FleetSample{Available: i})
	}
	got := thin(s, 20)
	if len(got) != 20 || got[0].Available != 0 || got[19].Available != 100 {
		t.Errorf("thin: %d samples, first %d, last %d", len(got), got[0].Available, got[len(got)-1].Available)
	}
	if len(thin(s[:5], 20)) != 5 {
		t.Error("thin dropped samples of a short series")
	}
}
