// Command rackfence-load is rackfence's load generator (package
// coordinator/bench). Modes:
//
//	rackfence-load write --target rackfence|etcd --url U [--token-file F] --clients 1,16,64 --duration 10s
//	rackfence-load compare --a-target etcd --a-url U --b-target rackfence --b-url U --b-token-file F --clients 1,64 --slice 5s --rounds 6
//	rackfence-load failover --urls U1,U2,U3 --pids U1=PID,… --token-file F
//	rackfence-load fill --url U --token-file F --hosts 100000
//	rackfence-load fleet --hosts 10000 --racks 100 --sims 4   (starts its own coordinator, agents, bmcsims)
//
// It prints one line per measurement, human-readable, and with -o json one
// JSON object per line.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/coordinator/bench"
	flag "github.com/spf13/pflag"
)

func main() {
	if len(os.Args) < 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: rackfence-load write|compare|failover|fill|fleet [flags]  (rackfence-load MODE --help)")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	target := fs.String("target", "rackfence", "write: rackfence or etcd")
	url := fs.String("url", "http://127.0.0.1:7480", "write/fill: the endpoint (the leader's API, or etcd's client URL)")
	urls := fs.String("urls", "", "failover: comma-separated member API URLs")
	pids := fs.String("pids", "", "failover: URL=PID,… of the members")
	tokenFile := fs.String("token-file", "", "rackfence: admin token file")
	clients := fs.String("clients", "1,16,64", "write: comma-separated client counts, one run each")
	duration := fs.Duration("duration", 10*time.Second, "write: measured time per run")
	warmup := fs.Duration("warmup", 2*time.Second, "write: unmeasured warm-up per run")
	keys := fs.Int("keys", 10000, "write: distinct keys (host names) written")
	hosts := fs.Int("hosts", 100000, "fill: hosts to create, each with a status carrying hardware details")
	perRack := fs.Int("per-rack", 1000, "fill: hosts per rack")
	workers := fs.Int("workers", 64, "fill: concurrent writers")
	aTarget := fs.String("a-target", "etcd", "compare: the baseline, rackfence or etcd")
	aURL := fs.String("a-url", "", "compare: the baseline's endpoint")
	aToken := fs.String("a-token-file", "", "compare: the baseline's admin token file (rackfence)")
	bTarget := fs.String("b-target", "rackfence", "compare: the measured target, rackfence or etcd")
	bURL := fs.String("b-url", "", "compare: the measured target's endpoint")
	bToken := fs.String("b-token-file", "", "compare: the measured target's admin token file (rackfence)")
	slice := fs.Duration("slice", 5*time.Second, "compare: measured time per target per round")
	rounds := fs.Int("rounds", 6, "compare: rounds, each one slice of A and one of B (order ABBA)")
	racks := fs.Int("racks", 100, "fleet: racks, one real rackfence-agent process each")
	sims := fs.Int("sims", 4, "fleet: rackfence-bmcsim processes sharing the BMCs (one listening port per BMC)")
	binDir := fs.String("bin", "", "fleet: directory of the rackfence binaries (default: this program's)")
	workDir := fs.String("dir", "", "fleet: work directory, kept afterwards (default: a temporary one, removed)")
	refresh := fs.Duration("status-refresh", time.Minute, "fleet: the agents' --status-refresh (steady-state traffic = hosts / refresh)")
	steady := fs.Duration("steady", time.Minute, "fleet: window over which steady-state coordinator CPU is measured")
	detaches := fs.Int("detaches", 200, "fleet: detach → ack latencies measured")
	coordArgs := fs.StringArray("coordinator-arg", nil, "fleet: extra coordinator flag (repeatable)")
	agentArgs := fs.StringArray("agent-arg", nil, "fleet: extra agent flag (repeatable)")
	out := fs.StringP("output", "o", "text", "text or json")
	if err := fs.Parse(os.Args[2:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	token := readToken(*tokenFile)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	emit := func(v map[string]any, text string) {
		if *out == "json" {
			b, _ := json.Marshal(v)
			fmt.Println(string(b))
		} else {
			fmt.Println(text)
		}
	}
	switch mode {
	case "write":
		for _, n := range parseClients(*clients) {
			t := newTarget(*target, *url, token, bench.NewHTTPClientFor(n, token))
			r := bench.Run(ctx, t, n, *duration, *warmup, *keys)
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
		if *aURL == "" || *bURL == "" {
			fail(fmt.Errorf("compare needs --a-url and --b-url"))
		}
		aTok, bTok := readToken(*aToken), readToken(*bToken)
		for _, n := range parseClients(*clients) {
			a := newTarget(*aTarget, *aURL, aTok, bench.NewHTTPClientFor(n, aTok))
			b := newTarget(*bTarget, *bURL, bTok, bench.NewHTTPClientFor(n, bTok))
			c := bench.Compare(ctx, a, b, n, *slice, *warmup/2, *rounds, *keys)
			var rs, steal []string
			var sj []map[string]any
			for _, r := range c.Rounds {
				rs = append(rs, fmt.Sprintf("%.2f", r.Ratio()))
				steal = append(steal, fmt.Sprintf("%.0f%%/%.0f%%", 100*r.A.Steal, 100*r.B.Steal))
				sj = append(sj, map[string]any{"ratio": r.Ratio(), "aRate": r.A.Rate(), "bRate": r.B.Rate(), "aSteal": r.A.Steal, "bSteal": r.B.Steal})
			}
			errText := ""
			for _, r := range []bench.Result{c.A, c.B} {
				if r.FirstErr != nil {
					errText += fmt.Sprintf(" %s first error: %v", r.Target, r.FirstErr)
				}
			}
			emit(map[string]any{"clients": n, "a": c.A.Target, "b": c.B.Target, "aRate": c.A.Rate(), "bRate": c.B.Rate(),
				"aP50ms": ms(c.A.P50), "aP99ms": ms(c.A.P99), "bP50ms": ms(c.B.P50), "bP99ms": ms(c.B.P99),
				"aErrors": c.A.Errors, "bErrors": c.B.Errors, "ratio": c.Ratio(), "medianRatio": c.MedianRatio(), "rounds": sj},
				fmt.Sprintf("clients=%-3d %s writes/s=%6.0f (p50=%5.1fms p99=%6.1fms)  %s writes/s=%6.0f (p50=%5.1fms p99=%6.1fms)  ratio=%.2fx median-of-rounds=%.2fx rounds=[%s] steal(a/b)=[%s] errors=%d/%d%s",
					n, c.A.Target, c.A.Rate(), ms(c.A.P50), ms(c.A.P99), c.B.Target, c.B.Rate(), ms(c.B.P50), ms(c.B.P99),
					c.Ratio(), c.MedianRatio(), strings.Join(rs, " "), strings.Join(steal, " "), c.A.Errors, c.B.Errors, errText))
		}
	case "failover":
		pm := map[string]int{}
		for _, kv := range strings.Split(*pids, ",") {
			u, p, ok := strings.Cut(kv, "=")
			n, err := strconv.Atoi(p)
			if !ok || err != nil {
				fail(fmt.Errorf("--pids: %q is not URL=PID", kv))
			}
			pm[u] = n
		}
		d, leader, err := bench.Failover(ctx, bench.NewHTTPClientFor(4, token), strings.Split(*urls, ","), token, pm)
		if err != nil {
			fail(err)
		}
		emit(map[string]any{"failoverMs": ms(d), "killed": leader},
			fmt.Sprintf("failover: kill -9 of leader %s → next accepted write in %.0f ms", leader, ms(d)))
	case "fill":
		start := time.Now()
		err := bench.Fill(ctx, bench.NewHTTPClientFor(*workers, token), *url, token, *hosts, *perRack, *workers, func(n int) {
			fmt.Fprintf(os.Stderr, "fill: %d hosts (%.0f/s)\n", n, float64(n)/time.Since(start).Seconds())
		})
		if err != nil {
			fail(err)
		}
		emit(map[string]any{"hosts": *hosts, "seconds": time.Since(start).Seconds()},
			fmt.Sprintf("fill: %d hosts with status and hardware details in %.1f s", *hosts, time.Since(start).Seconds()))
	case "fleet":
		if !fs.Changed("hosts") {
			*hosts = 10000
		}
		runFleet(ctx, bench.FleetConfig{Bin: *binDir, Dir: *workDir, Hosts: *hosts, Racks: *racks, Sims: *sims,
			StatusRefresh: *refresh, Steady: *steady, Detaches: *detaches, CoordArgs: *coordArgs, AgentArgs: *agentArgs}, emit)
	default:
		fail(fmt.Errorf("unknown mode %q: use write, compare, failover, fill or fleet", mode))
	}
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
