package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/bench"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestFleetEndToEnd runs rackfence-load fleet as a process over a tiny
// fleet (20 hosts, 2 racks, 2 bmcsims, real coordinator and agents over
// the default mutual TLS, beside 30 prefilled hosts without agents) and
// checks the JSON figures, the report, the plot and the CPU profiles
// (--profile-dir) it writes. The prefilled hosts are available from the
// start: a run that counted them would call the fleet available early and
// end its samples at 50.
func TestFleetEndToEnd(t *testing.T) {
	load := testenv.Binary(t, "rackfence-load")
	dir := filepath.Dir(load)
	for _, n := range []string{"rackfence-coordinator", "rackfence-agent", "rackfence-bmcsim"} {
		if p := testenv.Binary(t, n); filepath.Dir(p) != dir {
			t.Fatalf("%s is in %s, rackfence-load in %s: fleet needs them in one directory (make build, then RACKFENCE_BIN=$PWD/bin)", n, filepath.Dir(p), dir)
		}
	}
	out := t.TempDir()
	report, plot, prof := filepath.Join(out, "fleet.md"), filepath.Join(out, "fleet.svg"), filepath.Join(out, "prof")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, load, "fleet", "--bin", dir, "--dir", filepath.Join(out, "run"),
		"--hosts", "20", "--racks", "2", "--prefill", "30", "--sims", "2", "--steady", "2s", "--detaches", "4", "--status-refresh", "5s",
		"--report", report, "--plot", plot, "--profile-dir", prof, "--profile-for", "1s", "--profile-after", "1ms", "--profile-agents", "1", "-o", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rackfence-load fleet: %v\nstderr:\n%s", err, stderr.String())
	}
	var r struct {
		Hosts, Prefill, Racks, Sims   int
		TLS                           bool
		AvailableSeconds, DetachP99ms float64
		SteadyRaftEntriesPerSecond    float64
		CoordRSSPeakKiB               int64
		CoordHeapPeakBytes            float64
		ConnsPerAgentMax              int
		AgentCPUPerHostms             float64
		LoadWait                      struct{ Steal, OtherCores float64 }
		Samples                       []struct {
			Seconds   float64
			Available int
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("-o json: %v\n%s", err, stdout.String())
	}
	if r.Hosts != 20 || r.Prefill != 30 || r.Racks != 2 || r.Sims != 2 || !r.TLS {
		t.Errorf("run: %+v, want 20 hosts, 30 prefilled, 2 racks, 2 sims over TLS", r)
	}
	if r.AvailableSeconds <= 0 || r.DetachP99ms <= 0 || r.CoordRSSPeakKiB <= 0 || r.CoordHeapPeakBytes <= 0 || r.ConnsPerAgentMax < 1 {
		t.Errorf("a figure is missing: %+v", r)
	}
	if r.SteadyRaftEntriesPerSecond <= 0 { // lease renewals at least
		t.Errorf("steady Raft entries/s %v: the agents renew leases, so entries were applied", r.SteadyRaftEntriesPerSecond)
	}
	if r.LoadWait.Steal < 0 || r.LoadWait.OtherCores < 0 {
		t.Errorf("machine load while waiting %+v: /proc/stat is readable here, so it must be known", r.LoadWait)
	}
	if n := len(r.Samples); n == 0 || r.Samples[n-1].Available != 20 {
		t.Errorf("samples %+v: the last must count all 20 hosts of the fleet available (not the 30 prefilled)", r.Samples)
	}
	md, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# rackfence fleet benchmark: 20 hosts", "mutual TLS", "| all available after |", "](fleet.svg)", "--hosts 20", "30 prefilled hosts without agents (50 in all"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, name := range []string{"coordinator", "agent-r000", "bmcsim0", "bmcsim1"} {
		if fi, err := os.Stat(filepath.Join(prof, name+".cpu.pprof")); err != nil || fi.Size() == 0 {
			t.Errorf("--profile-dir: no profile of %s (%v)\nstderr:\n%s", name, err, stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(prof, "agent-r001.cpu.pprof")); err == nil {
		t.Errorf("--profile-agents 1 profiled agent r001 too")
	}
	svg, err := os.ReadFile(plot)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"svg"`
		Polyline []struct {
			Class  string `xml:"class,attr"`
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("plot is not XML: %v\n%s", err, svg)
	}
	found := false
	for _, p := range doc.Polyline {
		if p.Class == "available" {
			found = true
			if n := len(strings.Fields(p.Points)); n != len(r.Samples) {
				t.Errorf("plot: %d points for %d samples\n%s", n, len(r.Samples), svg)
			}
		}
	}
	if !found {
		t.Errorf("plot has no 'available' curve:\n%s", svg)
	}
}

func TestReportOnlyForFleet(t *testing.T) {
	c := Config{mode: "write", out: "text", keys: 1, hosts: 1, perRack: 1, workers: 1, rounds: 1, racks: 1, sims: 1, detaches: 1, sample: time.Second, report: "x.md"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--report") {
		t.Errorf("write --report: %v, want an error naming --report", err)
	}
	c.mode = "fleet"
	if err := c.Validate(); err != nil {
		t.Errorf("fleet --report: %v", err)
	}
	c.profDir, c.profFor, c.profAfter, c.profAgent = "p", 0, time.Second, 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--profile-for") {
		t.Errorf("--profile-for 0: %v, want an error naming --profile-for", err)
	}
	c.profDir = ""
	c.sample = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--sample-every") {
		t.Errorf("--sample-every 0: %v, want an error naming --sample-every", err)
	}
}

func TestAgentEnvValidated(t *testing.T) {
	c := Config{mode: "fleet", out: "text", keys: 1, hosts: 1, perRack: 1, workers: 1, rounds: 1, racks: 1, sims: 1, detaches: 1, sample: time.Second,
		agentEnv: []string{"GOMAXPROCS=1", "GOGC="}}
	if err := c.Validate(); err != nil {
		t.Errorf("--agent-env GOMAXPROCS=1 --agent-env GOGC=: %v", err)
	}
	for _, bad := range []string{"GOMAXPROCS", "=1", "GO MAXPROCS=1"} {
		c.agentEnv = []string{bad}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--agent-env") {
			t.Errorf("--agent-env %q: %v, want an error naming --agent-env", bad, err)
		}
	}
	c.agentEnv, c.mode = []string{"GOGC=50"}, "write"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--agent-env") {
		t.Errorf("write --agent-env: %v, want an error naming --agent-env", err)
	}
}

// TestFleetDetachesZero: --detaches 0 measures no detach (a run about
// operators or memory only) and the report says so; a negative count is
// refused naming the flag.
func TestFleetDetachesZero(t *testing.T) {
	c := Config{mode: "fleet", out: "text", keys: 1, hosts: 1, perRack: 1, workers: 1, rounds: 1, racks: 1, sims: 1, detaches: 0, sample: time.Second}
	if err := c.Validate(); err != nil {
		t.Errorf("fleet --detaches 0: %v, want it accepted", err)
	}
	c.detaches = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--detaches") {
		t.Errorf("--detaches -1: %v, want an error naming --detaches", err)
	}
	var b strings.Builder
	if err := bench.WriteFleetText(&b, bench.FleetResult{Hosts: 20, Racks: 2, Sims: 1, TLS: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "not measured (--detaches 0)") {
		t.Errorf("a run without detaches reports:\n%s", b.String())
	}
}

func TestFleetNiceValidated(t *testing.T) {
	c := Config{mode: "fleet", out: "text", keys: 1, hosts: 1, perRack: 1, workers: 1, rounds: 1, racks: 1, sims: 1, detaches: 1, sample: time.Second, fleetNice: 10}
	if err := c.Validate(); err != nil {
		t.Errorf("fleet --fleet-nice 10: %v", err)
	}
	for _, bad := range []int{-5, 20} {
		c.fleetNice = bad
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--fleet-nice") {
			t.Errorf("--fleet-nice %d: %v, want an error naming --fleet-nice", bad, err)
		}
	}
	c.fleetNice, c.mode = 10, "write"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--fleet-nice") {
		t.Errorf("write --fleet-nice 10: %v, want an error naming --fleet-nice", err)
	}
}
