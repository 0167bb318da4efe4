// Command rackfence-load is rackfence's load generator (package
// testkit/bench). Modes:
//
//	rackfence-load write --target rackfence|etcd --url U [--token-file F] --clients 1,16,64 --duration 10s
//	rackfence-load compare --a-target etcd --a-url U --b-target rackfence --b-url U --b-token-file F --clients 1,64 --slice 5s --rounds 6
//	rackfence-load failover --urls U1,U2,U3 --pids U1=PID,… --token-file F
//	rackfence-load fill --url U --token-file F --hosts 100000
//	rackfence-load watchers --watchers 0,500,2000 --writes 500 [--hosts 100] [--after 60s] [--watch-mode stream|poll] [--crowd-nice 19]   (starts its own coordinator per count)
//	rackfence-load put-hosts --url U --token-file F --writes 500   (a watchers run's writes, in a process of their own)
//	rackfence-load fleet --hosts 10000 --racks 100 --sims 4 [--plaintext] [--fleet-nice 10] [--report F.md] [--plot F.svg]   (starts its own coordinator, agents, bmcsims)
//
// It prints one line per measurement, human-readable, and with -o json one
// JSON object per line.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/testkit/bench"
)

func main() {
	var c Config
	fs := c.flags()
	os.Exit(daemon.Program{
		Name: "rackfence-load", Flags: fs,
		Validate: func() error {
			c.mode = fs.Arg(0)
			return c.Validate()
		},
		Run: func(ctx context.Context, _ *slog.Logger) error { return run(ctx, &c, fs) },
	}.Main(os.Args[1:]))
}

// run measures what c.mode says. Helpers exit 1 themselves (fail).
func run(ctx context.Context, c *Config, fs *flag.FlagSet) error {
	token := readToken(c.tokenFile)
	emit := func(v map[string]any, text string) {
		if c.out == "json" {
			b, _ := json.Marshal(v)
			fmt.Println(string(b))
		} else {
			fmt.Println(text)
		}
	}
	switch c.mode {
	case "write":
		for _, n := range parseClients(c.clients) {
			t := newTarget(c.target, c.url, token, bench.NewHTTPClientFor(n, token))
			r := bench.Run(ctx, t, n, c.duration, c.warmup, c.keys)
			errText := ""
			if r.FirstErr != nil {
				errText = " first error: " + r.FirstErr.Error()
			}
			emit(map[string]any{"target": r.Target, "clients": n, "writes": r.Writes, "errors": r.Errors,
				"rate": r.Rate(), "p50ms": ms(r.P50), "p99ms": ms(r.P99)},
				fmt.Sprintf("%-9s clients=%-3d writes/s=%7.0f p50=%6.1fms p99=%6.1fms errors=%d%s",
					r.Target, n, r.Rate(), ms(r.P50), ms(r.P99), r.Errors, errText))
		}
	case "compare":
		aTok, bTok := readToken(c.a.tokenFile), readToken(c.b.tokenFile)
		for _, n := range parseClients(c.clients) {
			a := newTarget(c.a.kind, c.a.url, aTok, bench.NewHTTPClientFor(n, aTok))
			b := newTarget(c.b.kind, c.b.url, bTok, bench.NewHTTPClientFor(n, bTok))
			cmp := bench.Compare(ctx, a, b, n, c.slice, c.warmup/2, c.rounds, c.keys)
			var rs, steal []string
			var sj []map[string]any
			for _, r := range cmp.Rounds {
				rs = append(rs, fmt.Sprintf("%.2f", r.Ratio()))
				steal = append(steal, fmt.Sprintf("%.0f%%/%.0f%%", 100*r.A.Steal, 100*r.B.Steal))
				sj = append(sj, map[string]any{"ratio": r.Ratio(), "aRate": r.A.Rate(), "bRate": r.B.Rate(), "aSteal": r.A.Steal, "bSteal": r.B.Steal})
			}
			errText := ""
			for _, r := range []bench.Result{cmp.A, cmp.B} {
				if r.FirstErr != nil {
					errText += fmt.Sprintf(" %s first error: %v", r.Target, r.FirstErr)
				}
			}
			emit(map[string]any{"clients": n, "a": cmp.A.Target, "b": cmp.B.Target, "aRate": cmp.A.Rate(), "bRate": cmp.B.Rate(),
				"aP50ms": ms(cmp.A.P50), "aP99ms": ms(cmp.A.P99), "bP50ms": ms(cmp.B.P50), "bP99ms": ms(cmp.B.P99),
				"aErrors": cmp.A.Errors, "bErrors": cmp.B.Errors, "ratio": cmp.Ratio(), "medianRatio": cmp.MedianRatio(), "rounds": sj},
				fmt.Sprintf("clients=%-3d %s writes/s=%6.0f (p50=%5.1fms p99=%6.1fms)  %s writes/s=%6.0f (p50=%5.1fms p99=%6.1fms)  ratio=%.2fx median-of-rounds=%.2fx rounds=[%s] steal(a/b)=[%s] errors=%d/%d%s",
					n, cmp.A.Target, cmp.A.Rate(), ms(cmp.A.P50), ms(cmp.A.P99), cmp.B.Target, cmp.B.Rate(), ms(cmp.B.P50), ms(cmp.B.P99),
					cmp.Ratio(), cmp.MedianRatio(), strings.Join(rs, " "), strings.Join(steal, " "), cmp.A.Errors, cmp.B.Errors, errText))
		}
	case "failover":
		pm := map[string]int{}
		for _, kv := range strings.Split(c.pids, ",") {
			u, p, ok := strings.Cut(kv, "=")
			n, err := strconv.Atoi(p)
			if !ok || err != nil {
				fail(fmt.Errorf("--pids: %q is not URL=PID", kv))
			}
			pm[u] = n
		}
		d, leader, err := bench.Failover(ctx, bench.NewHTTPClientFor(4, token), strings.Split(c.urls, ","), token, pm)
		if err != nil {
			fail(err)
		}
		emit(map[string]any{"failoverMs": ms(d), "killed": leader},
			fmt.Sprintf("failover: kill -9 of leader %s → next accepted write in %.0f ms", leader, ms(d)))
	case "fill":
		start := time.Now()
		err := bench.Fill(ctx, bench.NewHTTPClientFor(c.workers, token), c.url, token, c.hosts, c.perRack, c.workers, func(n int) {
			fmt.Fprintf(os.Stderr, "fill: %d hosts (%.0f/s)\n", n, float64(n)/time.Since(start).Seconds())
		})
		if err != nil {
			fail(err)
		}
		emit(map[string]any{"hosts": c.hosts, "seconds": time.Since(start).Seconds()},
			fmt.Sprintf("fill: %d hosts with status and hardware details in %.1f s", c.hosts, time.Since(start).Seconds()))
	case "fleet":
		if !fs.Changed("hosts") { // RACKFENCE_HOSTS counts as given (envflag sets it)
			c.hosts = 10000
		}
		runFleet(ctx, bench.FleetConfig{Bin: c.binDir, Dir: c.workDir, Hosts: c.hosts, Racks: c.racks, Prefill: c.prefill, Sims: c.sims, Plaintext: c.plaintext, SampleEvery: c.sample,
			StatusRefresh: c.refresh, Steady: c.steady, Detaches: c.detaches, CoordArgs: c.coordArgs, AgentArgs: c.agentArgs, AgentEnv: c.agentEnv,
			Operators: c.operators, OperatorEvery: c.opEvery, OperatorWindow: c.opWindow, OperatorChunk: c.chunk,
			ProfileDir: c.profDir, ProfileFor: c.profFor, ProfileAfter: c.profAfter, ProfileAgents: c.profAgent, FleetNice: c.fleetNice},
			fleetOutput{report: c.report, plot: c.plot}, emit)
	case "put-hosts":
		// The writes of a watchers run, in a process of their own.
		lats, answered, err := bench.PutWatchedHosts(ctx, c.url, token, c.writes)
		if err != nil {
			fail(err)
		}
		for i, d := range lats {
			fmt.Println(d.Microseconds(), answered[i].UnixMicro())
		}
	case "watchers":
		if !fs.Changed("hosts") {
			c.hosts = 100
		}
		runWatchers(ctx, c, emit)
	}
	return nil
}

func parseClients(s string) []int {
	var ns []int
	for _, cs := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(cs))
		if err != nil || n < 1 {
			fail(fmt.Errorf("--clients: %q is not a positive number", cs))
		}
		ns = append(ns, n)
	}
	return ns
}

func readToken(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	return strings.TrimSpace(string(b))
}

func newTarget(kind, url, token string, hc *http.Client) bench.Target {
	switch kind {
	case "rackfence":
		return &bench.Rackfence{URL: url, Token: token, Rack: "bench", Prefix: "bench", Client: hc}
	case "etcd":
		return &bench.Etcd{URL: url, Prefix: "bench", Client: hc}
	}
	fail(fmt.Errorf("target %q is not rackfence or etcd", kind))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rackfence-load:", err)
	os.Exit(1)
}
