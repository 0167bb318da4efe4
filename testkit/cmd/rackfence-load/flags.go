package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bench"
	flag "github.com/spf13/pflag"
)

// modes of rackfence-load, its first argument.
var modes = []string{"write", "compare", "failover", "fill", "fleet", "watchers", "put-hosts"}

// Config is rackfence-load's configuration: the mode (first argument) and
// one field a flag, named as the flag (every flag also reads
// RACKFENCE_<FLAG>). Each flag's usage says which modes read it.
type Config struct {
	mode      string
	target    string
	url       string
	urls      string
	pids      string
	tokenFile string
	clients   string
	duration  time.Duration
	warmup    time.Duration
	keys      int
	hosts     int
	perRack   int
	workers   int
	a, b      side
	slice     time.Duration
	rounds    int
	racks     int
	prefill   int
	sims      int
	binDir    string
	workDir   string
	refresh   time.Duration
	steady    time.Duration
	detaches  int
	coordArgs []string
	agentArgs []string
	agentEnv  []string
	plaintext bool
	sample    time.Duration
	report    string
	plot      string
	out       string
	watchers  string
	writes    int
	after     time.Duration
	watchMode string
	dialFirst bool
	crowdNice int
	fleetNice int
	operators int
	opEvery   time.Duration
	opWindow  time.Duration
	chunk     int
	profDir   string
	profFor   time.Duration
	profAfter time.Duration
	profAgent int
}

// side is one target of compare (--a-* or --b-*).
type side struct{ kind, url, tokenFile string }

// flags declares c's flags on a new flag set.
func (c *Config) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("rackfence-load", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rackfence-load write|compare|failover|fill|fleet|watchers [flags]")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.target, "target", "rackfence", "write: rackfence or etcd")
	fs.StringVar(&c.url, "url", "http://127.0.0.1:7480", "write/fill: the endpoint (the leader's API, or etcd's client URL)")
	fs.StringVar(&c.urls, "urls", "", "failover: comma-separated member API URLs")
	fs.StringVar(&c.pids, "pids", "", "failover: URL=PID,… of the members")
	fs.StringVar(&c.tokenFile, "token-file", "", "rackfence: admin token file")
	fs.StringVar(&c.clients, "clients", "1,16,64", "write: comma-separated client counts, one run each")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "write: measured time per run")
	fs.DurationVar(&c.warmup, "warmup", 2*time.Second, "write: unmeasured warm-up per run")
	fs.IntVar(&c.keys, "keys", 10000, "write: distinct keys (host names) written")
	fs.IntVar(&c.hosts, "hosts", 100000, "fill: hosts to create, each with a status carrying hardware details")
	fs.IntVar(&c.perRack, "per-rack", 1000, "fill: hosts per rack")
	fs.IntVar(&c.workers, "workers", 64, "fill: concurrent writers")
	for _, s := range []struct {
		side            *side
		prefix, kind, w string
	}{{&c.a, "a", "etcd", "the baseline"}, {&c.b, "b", "rackfence", "the measured target"}} {
		fs.StringVar(&s.side.kind, s.prefix+"-target", s.kind, "compare: "+s.w+", rackfence or etcd")
		fs.StringVar(&s.side.url, s.prefix+"-url", "", "compare: "+s.w+"'s endpoint")
		fs.StringVar(&s.side.tokenFile, s.prefix+"-token-file", "", "compare: "+s.w+"'s admin token file (rackfence)")
	}
	fs.DurationVar(&c.slice, "slice", 5*time.Second, "compare: measured time per target per round")
	fs.IntVar(&c.rounds, "rounds", 6, "compare: rounds, each one slice of A and one of B (order ABBA)")
	fs.IntVar(&c.racks, "racks", 100, "fleet: racks, one real rackfence-agent process each")
	fs.IntVar(&c.prefill, "prefill", 0, "fleet: hosts created through the API before the agents start, in racks of 1,000 with no agent (their statuses written once): the coordinator's inventory of a larger fleet for the operator, memory and detach figures; memory per host counts them")
	fs.IntVar(&c.sims, "sims", 4, "fleet: rackfence-bmcsim processes sharing the BMCs (one listening port per BMC, each process on its own 127.0.1.N; more are started when one would exceed 10,000 BMCs or half the open-files limit)")
	fs.StringVar(&c.binDir, "bin", "", "fleet/watchers: directory of the rackfence binaries (default: this program's)")
	fs.StringVar(&c.workDir, "dir", "", "fleet/watchers: work directory, kept afterwards (default: a temporary one, removed)")
	fs.DurationVar(&c.refresh, "status-refresh", time.Minute, "fleet: the agents' --status-refresh (steady-state traffic = hosts / refresh)")
	fs.DurationVar(&c.steady, "steady", time.Minute, "fleet: window over which steady-state coordinator CPU is measured")
	fs.IntVar(&c.detaches, "detaches", 200, "fleet: detach → ack latencies measured (0: none)")
	fs.BoolVar(&c.dialFirst, "watch-dial-first", false, "watchers: each client (100 watchers) makes one request before its watchers open, so they share its one connection; without it each concurrent first request dials a TLS connection of its own (Go's HTTP/2 client keeps one and closes the others)")
	fs.StringVar(&c.watchMode, "watch-mode", "stream", "watchers: how each watcher follows the rack: stream (one streamed watch, client.FollowRack) or poll (a long poll per answer, client.Watch)")
	fs.IntVar(&c.crowdNice, "crowd-nice", 0, "watchers: run the watchers (this process) at this nice value (1–19; needs root), the coordinator and the writer at 0: a model of watchers on other machines; 0: all at the same priority. Report runs with and without it")
	fs.IntVar(&c.fleetNice, "fleet-nice", 0, "fleet: run the agents and bmcsims at this nice value (1–19), the coordinator at 0: a model of a coordinator on machines of its own; 0: all at the same priority. Report runs with and without it")
	fs.StringArrayVar(&c.coordArgs, "coordinator-arg", nil, "fleet/watchers: extra coordinator flag (repeatable)")
	fs.StringArrayVar(&c.agentArgs, "agent-arg", nil, "fleet: extra agent flag (repeatable)")
	fs.StringArrayVar(&c.agentEnv, "agent-env", nil, "fleet: KEY=VALUE added to every agent's environment (repeatable), e.g. GOMAXPROCS=1 or GOGC=50")
	fs.BoolVar(&c.plaintext, "plaintext", false, "fleet: run the coordinator with --insecure-plaintext (default: its mutual TLS), for comparison")
	fs.DurationVar(&c.sample, "sample-every", time.Second, "fleet: period of the samples of hosts available, coordinator RSS and heap while registering (one /metrics scrape each)")
	fs.StringVar(&c.report, "report", "", "fleet: write a Markdown report of the run to this file")
	fs.IntVar(&c.operators, "operators", 0, "fleet: clients listing every host every --operator-every, in pages of summaries, pages of whole hosts, then unpaged, each for --operator-window, with one more client following the fleet watch (0: none)")
	fs.DurationVar(&c.opEvery, "operator-every", 2*time.Second, "fleet: how often each operator lists every host")
	fs.DurationVar(&c.opWindow, "operator-window", time.Minute, "fleet: how long each operator mode runs")
	fs.IntVar(&c.chunk, "chunk-size", wire.DefaultPageSize, "fleet: the operators' page size (limit)")
	fs.StringVar(&c.profDir, "profile-dir", "", "fleet: write CPU profiles taken while hosts register to this directory (NAME.cpu.pprof: the coordinator, every bmcsim, the first --profile-agents agents, each started with a --pprof-addr of its own; go tool pprof -top -cum FILE); empty: none")
	fs.DurationVar(&c.profFor, "profile-for", 20*time.Second, "fleet: length of each --profile-dir profile")
	fs.DurationVar(&c.profAfter, "profile-after", 5*time.Second, "fleet: when the --profile-dir profiles start, after registration starts")
	fs.IntVar(&c.profAgent, "profile-agents", 3, "fleet: how many agents --profile-dir profiles (racks r000, r001, …)")
	fs.StringVar(&c.plot, "plot", "", "fleet: write an SVG plot of hosts available over time to this file")
	fs.StringVar(&c.watchers, "watchers", "0,500,2000", "watchers: comma-separated watcher counts, one run (and one new coordinator) each")
	fs.IntVar(&c.writes, "writes", 500, "watchers: hosts created one at a time in the watched rack")
	fs.DurationVar(&c.after, "after", time.Minute, "watchers: how long after the watchers closed the last coordinator RSS sample is taken")
	fs.StringVarP(&c.out, "output", "o", "text", "text or json")
	return fs
}

// Validate checks the mode and the flags every mode shares. Every error
// names the flag or the mode, what is wrong and what to do.
func (c *Config) Validate() error {
	known := false
	for _, m := range modes {
		known = known || c.mode == m
	}
	if !known {
		if c.mode == "" {
			return fmt.Errorf("no mode: use rackfence-load MODE [flags] with MODE one of %s", strings.Join(modes, ", "))
		}
		return fmt.Errorf("unknown mode %q: use %s", c.mode, strings.Join(modes, ", "))
	}
	if c.out != "text" && c.out != "json" {
		return fmt.Errorf("-o %q: use text or json", c.out)
	}
	if c.mode == "compare" && (c.a.url == "" || c.b.url == "") {
		return fmt.Errorf("compare needs --a-url and --b-url")
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"keys", c.keys}, {"hosts", c.hosts}, {"per-rack", c.perRack}, {"workers", c.workers}, {"rounds", c.rounds},
		{"racks", c.racks}, {"sims", c.sims}} {
		if n.v < 1 {
			return fmt.Errorf("--%s %d: use 1 or more", n.flag, n.v)
		}
	}
	if c.detaches < 0 {
		return fmt.Errorf("--detaches %d: use a number of detaches, or 0 to measure none", c.detaches)
	}
	if c.operators < 0 || c.operators > 0 && (c.chunk < 1 || c.chunk > wire.MaxPageSize || c.opEvery <= 0 || c.opWindow <= 0) {
		return fmt.Errorf("--operators %d / --chunk-size %d / --operator-every %s / --operator-window %s: need operators ≥ 0, chunk-size 1 to %d, positive durations",
			c.operators, c.chunk, c.opEvery, c.opWindow, wire.MaxPageSize)
	}
	if c.profDir != "" && (c.profFor < time.Second || c.profAfter <= 0 || c.profAgent < 1) {
		return fmt.Errorf("--profile-for %s / --profile-after %s / --profile-agents %d: need a profile of 1s or more, a positive start, 1 agent or more", c.profFor, c.profAfter, c.profAgent)
	}
	for _, kv := range c.agentEnv {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsAny(k, " \t\n") {
			return fmt.Errorf("--agent-env %q: use KEY=VALUE, e.g. --agent-env GOMAXPROCS=1", kv)
		}
	}
	if err := bench.CheckFleetNice(c.fleetNice); err != nil {
		return err
	}
	if c.fleetNice > 0 && c.mode != "fleet" {
		return fmt.Errorf("--fleet-nice: only the fleet mode starts agents; drop it or use rackfence-load fleet (watchers has --crowd-nice)")
	}
	if len(c.agentEnv) > 0 && c.mode != "fleet" {
		return fmt.Errorf("--agent-env: only the fleet mode starts agents; drop it or use rackfence-load fleet")
	}
	if c.mode == "watchers" && c.writes < 1 {
		return fmt.Errorf("--writes %d: use 1 or more", c.writes)
	}
	if c.sample < 10*time.Millisecond {
		return fmt.Errorf("--sample-every %s: use 10ms or more (each sample scrapes the coordinator's /metrics)", c.sample)
	}
	if c.mode != "fleet" {
		for _, name := range []string{"report", "plot", "profile-dir"} {
			if v := map[string]string{"report": c.report, "plot": c.plot, "profile-dir": c.profDir}[name]; v != "" {
				return fmt.Errorf("--%s %q: only the fleet mode writes one; drop it or use rackfence-load fleet", name, v)
			}
		}
	}
	return nil
}
