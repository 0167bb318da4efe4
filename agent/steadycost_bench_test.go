package agent_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/procstat"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// BenchmarkSteadyCost: what an available host costs per status refresh
// once nothing changes. A real rackfence-agent (its defaults, the direct
// provisioner, --status-refresh 5s) takes 200 new hosts behind one
// rackfence-bmcsim (default profile, plain HTTP, no added latency: what
// the fleet runs) to available, lets one refresh period pass, then counts
// over 4 more periods: the agent's, the simulator's and the
// coordinator's CPU per host per refresh (ms-cpu/host/refresh,
// sim-ms-cpu/host/refresh, coord-ms-cpu/host/refresh: CPU seconds, not
// wall time), the Redfish requests per host per refresh the simulator
// answered (bmc-req/host/refresh, and the GETs by path printed), the
// agent's rack status reports (reports/refresh: one request each to the
// coordinator, whatever the number of hosts it carries) and its health
// reads per host per refresh. RACKFENCE_BENCH_HOSTS=N takes N hosts,
// RACKFENCE_BENCH_REFRESH=D another refresh, RACKFENCE_BENCH_PERIODS=M
// another count of periods; RACKFENCE_BENCH_AGENT_ARGS adds agent flags
// (space-separated); RACKFENCE_BENCH_CPUPROFILE=FILE writes the agent's
// CPU profile over the window to FILE.
//
//	make build && RACKFENCE_BIN=$PWD/bin go test -run '^$' -bench SteadyCost -benchtime 1x ./agent/
func BenchmarkSteadyCost(b *testing.B) {
	hosts := envCount("RACKFENCE_BENCH_HOSTS", 200)
	periods := envCount("RACKFENCE_BENCH_PERIODS", 4)
	refresh := envDuration("RACKFENCE_BENCH_REFRESH", 5*time.Second)
	for range b.N {
		e := newEnv(b, envOpts{bmcs: hosts})
		e.applyMany(b, hosts)
		maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(b, "127.0.0.1"))
		args := []string{"--metrics-addr", maddr, "--status-refresh", refresh.String()}
		args = append(args, strings.Fields(os.Getenv("RACKFENCE_BENCH_AGENT_ARGS"))...)
		prof := os.Getenv("RACKFENCE_BENCH_CPUPROFILE")
		if prof != "" {
			args = append(args, "--pprof")
		}
		_, agent := e.timeToAvailable(b, hosts, "", args...)
		// The hosts' first refresh after registration, then the window.
		time.Sleep(refresh)
		before := e.steadySample(b, hosts, agent.Cmd.Process.Pid, maddr)
		window := time.Duration(periods) * refresh
		if prof != "" {
			// The agent's CPU profile over the window, written to prof.
			writeProfile(b, maddr, window, prof)
		} else {
			time.Sleep(window)
		}
		after := e.steadySample(b, hosts, agent.Cmd.Process.Pid, maddr)
		per := float64(hosts * periods)
		agentMS := (after.agentCPU - before.agentCPU) * 1000 / per
		simMS := (after.simCPU - before.simCPU) * 1000 / per
		coordMS := (after.coordCPU - before.coordCPU) * 1000 / per
		reqs := float64(after.requests-before.requests) / per
		reports := (after.reports - before.reports) / float64(periods)
		health := (after.health - before.health) / per
		// Each state read opens a connection of its own on the BMC's port.
		conns := float64(after.conns-before.conns-hosts) / per
		reconciles := (after.reconcile - before.reconcile) / per
		b.ReportMetric(agentMS, "ms-cpu/host/refresh")
		b.ReportMetric(simMS, "sim-ms-cpu/host/refresh")
		b.ReportMetric(coordMS, "coord-ms-cpu/host/refresh")
		b.ReportMetric(reqs, "bmc-req/host/refresh")
		b.ReportMetric(reports, "reports/refresh")
		b.ReportMetric(health, "health-reads/host/refresh")
		b.ReportMetric(conns, "bmc-conns/host/refresh")
		b.ReportMetric(reconciles, "reconciles/host/refresh")
		fmt.Printf("%d available hosts, %d refreshes of %s: per host per refresh agent CPU %.3f ms, bmcsim %.3f ms, coordinator %.3f ms; %.2f Redfish requests, %.2f health reads, %.2f new BMC connections, %.2f reconciles; %.1f rack reports a refresh\n",
			hosts, periods, refresh, agentMS, simMS, coordMS, reqs, health, conns, reconciles, reports)
		paths := make([]string, 0, len(after.gets))
		for p := range after.gets {
			if after.gets[p] > before.gets[p] {
				paths = append(paths, p)
			}
		}
		sort.Slice(paths, func(i, j int) bool {
			return after.gets[paths[i]]-before.gets[paths[i]] > after.gets[paths[j]]-before.gets[paths[j]]
		})
		for _, p := range paths {
			fmt.Printf("  GET %-70s %.3f/host/refresh\n", p, float64(after.gets[p]-before.gets[p])/per)
		}
	}
}

// steadySample is one reading of what BenchmarkSteadyCost counts.
type steadySample struct {
	agentCPU, simCPU, coordCPU float64
	requests, conns            int
	gets                       map[string]int
	reports, health, reconcile float64
}

func (e *env) steadySample(b *testing.B, hosts, agentPid int, maddr string) steadySample {
	s := steadySample{agentCPU: procstat.CPUSeconds(agentPid), simCPU: procstat.CPUSeconds(e.sim.Cmd.Process.Pid),
		coordCPU: procstat.CPUSeconds(e.coord.Cmd.Process.Pid), gets: map[string]int{}}
	for i := range hosts {
		st, err := e.simState(i)
		if err != nil {
			b.Fatal(err)
		}
		s.requests += st.Requests
		s.conns += st.Connections
		for p, n := range st.Gets {
			s.gets[p] += n
		}
	}
	s.reports = scrapeSum(b, maddr, "rackfence_agent_rack_status_reports_total")
	s.health = scrapeSum(b, maddr, "rackfence_agent_health_reads_total")
	s.reconcile = scrapeSum(b, maddr, "rackfence_agent_reconciles_total")
	return s
}

// scrapeSum adds every sample of the metric name on the /metrics at addr.
func scrapeSum(b *testing.B, addr, name string) float64 {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		b.Fatalf("scrape %s: %v", addr, err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+" ") && !strings.HasPrefix(line, name+"{") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// writeProfile writes the CPU profile of the process serving pprof on
// maddr over d to file.
func writeProfile(b *testing.B, maddr string, d time.Duration, file string) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", maddr, int(d.Seconds())))
	if err != nil {
		b.Fatalf("profile: %v", err)
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		b.Fatalf("profile: %v", err)
	}
}
