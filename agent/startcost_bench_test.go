package agent_test

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/procstat"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// BenchmarkAgentStartCost: what a rackfence-agent process costs before it
// has any host. 10 real agents (RACKFENCE_BENCH_AGENTS=N for another
// count), one rack each, start at once against one coordinator over its
// mutual TLS; reports each agent's CPU from its start until it holds its
// lease (ms-cpu/agent: enrolment, certificate, lease, first watch) and
// its CPU a second over the next 10 s (idle-ms-cpu/s: renewals every
// TTL/3, the watch's long polls). With GODEBUG=inittrace=1 in the
// environment it also prints the costliest package inits of the first
// agent (the agents inherit the environment).
//
//	make build && RACKFENCE_BIN=$PWD/bin go test -run '^$' -bench AgentStartCost -benchtime 1x ./agent/
func BenchmarkAgentStartCost(b *testing.B) {
	agents := envCount("RACKFENCE_BENCH_AGENTS", 10)
	for range b.N {
		e := newEnv(b, envOpts{})
		procs := make([]*testenv.Process, agents)
		for i := range procs {
			procs[i] = e.startAgent(fmt.Sprintf("s%02d", i), fmt.Sprintf("start%02d", i), "--log-level", "warn")
		}
		held := make([]float64, agents)
		deadline := time.Now().Add(2 * time.Minute)
		for left := agents; left > 0; {
			for i, p := range procs {
				if held[i] > 0 {
					continue
				}
				if p.Exited() {
					b.Fatalf("agent %d exited:\n%s", i, p.Output())
				}
				if l, err := e.admin.GetLease(ctx(b), fmt.Sprintf("s%02d", i)); err == nil && l.Holder == fmt.Sprintf("start%02d", i) {
					held[i] = procstat.CPUSeconds(p.Cmd.Process.Pid)
					left--
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d agents hold no lease after 2 minutes", left, agents)
			}
			time.Sleep(20 * time.Millisecond)
		}
		const idle = 10 * time.Second
		time.Sleep(idle)
		sum, idleSum := 0.0, 0.0
		for i, p := range procs {
			sum += held[i]
			idleSum += procstat.CPUSeconds(p.Cmd.Process.Pid) - held[i]
		}
		b.ReportMetric(sum*1000/float64(agents), "ms-cpu/agent")
		b.ReportMetric(idleSum*1000/float64(agents)/idle.Seconds(), "idle-ms-cpu/s")
		fmt.Printf("%d agents: %.1f ms of CPU each to their lease, then %.2f ms a second idle\n",
			agents, sum*1000/float64(agents), idleSum*1000/float64(agents)/idle.Seconds())
		if strings.Contains(os.Getenv("GODEBUG"), "inittrace=1") {
			printInits(procs[0].Output())
		}
	}
}

// printInits prints the ten costliest "init PKG @T ms, C ms clock, …"
// lines of GODEBUG=inittrace=1 output, and their total.
func printInits(out string) {
	type ini struct {
		pkg string
		ms  float64
	}
	var all []ini
	total := 0.0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[0] != "init" {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		all = append(all, ini{f[1], ms})
		total += ms
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ms > all[j].ms })
	fmt.Printf("package inits of the first agent: %d, %.1f ms of clock in all\n", len(all), total)
	for _, x := range all[:min(10, len(all))] {
		fmt.Printf("  %-60s %.2f ms\n", x.pkg, x.ms)
	}
}
