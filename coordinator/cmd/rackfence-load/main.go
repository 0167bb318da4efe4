// Command rackfence-load is rackfence's load generator (package
// coordinator/bench). Modes:
//
//	rackfence-load write --target rackfence|etcd --url U [--token-file F] --clients 1,16,64 --duration 10s
//	rackfence-load failover --urls U1,U2,U3 --pids U1=PID,… --token-file F
//	rackfence-load fill --url U --token-file F --hosts 100000
//
// It prints one line per measurement, human-readable, and with -o json one
// JSON object per line.
package main

import (
	"context"
	"encoding/json"
	"fmt"
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
		fmt.Fprintln(os.Stderr, "usage: rackfence-load write|failover|fill [flags]  (rackfence-load MODE --help)")
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
	out := fs.StringP("output", "o", "text", "text or json")
	if err := fs.Parse(os.Args[2:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	token := ""
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fail(err)
		}
		token = strings.TrimSpace(string(b))
	}
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
		for _, cs := range strings.Split(*clients, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(cs))
			if err != nil || n < 1 {
				fail(fmt.Errorf("--clients: %q is not a positive number", cs))
			}
			hc := bench.NewHTTPClient(n)
			var t bench.Target
			switch *target {
			case "rackfence":
				t = &bench.Rackfence{URL: *url, Token: token, Rack: "bench", Prefix: "bench", Client: hc}
			case "etcd":
				t = &bench.Etcd{URL: *url, Prefix: "bench", Client: hc}
			default:
				fail(fmt.Errorf("--target: %q is not rackfence or etcd", *target))
			}
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
		d, leader, err := bench.Failover(ctx, bench.NewHTTPClient(4), strings.Split(*urls, ","), token, pm)
		if err != nil {
			fail(err)
		}
		emit(map[string]any{"failoverMs": ms(d), "killed": leader},
			fmt.Sprintf("failover: kill -9 of leader %s → next accepted write in %.0f ms", leader, ms(d)))
	case "fill":
		start := time.Now()
		err := bench.Fill(ctx, bench.NewHTTPClient(*workers), *url, token, *hosts, *perRack, *workers, func(n int) {
			fmt.Fprintf(os.Stderr, "fill: %d hosts (%.0f/s)\n", n, float64(n)/time.Since(start).Seconds())
		})
		if err != nil {
			fail(err)
		}
		emit(map[string]any{"hosts": *hosts, "seconds": time.Since(start).Seconds()},
			fmt.Sprintf("fill: %d hosts with status and hardware details in %.1f s", *hosts, time.Since(start).Seconds()))
	default:
		fail(fmt.Errorf("unknown mode %q: use write, failover or fill", mode))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rackfence-load:", err)
	os.Exit(1)
}
