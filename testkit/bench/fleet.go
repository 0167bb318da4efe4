package bench

import (
	"context"
	"fmt"
	"github.com/rackfence/rackfence/testkit/procstat"
	"net/http"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// FleetConfig sizes a fleet run: one coordinator, Racks real agent
// processes, Sims (or more) real rackfence-bmcsim processes serving Hosts
// BMCs.
type FleetConfig struct {
	// Bin holds rackfence-coordinator, rackfence-agent, rackfence-bmcsim.
	Bin string
	// Dir is the work directory (data dir, tokens, process logs).
	Dir          string
	Hosts, Racks int
	// Sims is how many bmcsim processes share the BMCs at least; the run
	// starts more when one process would hold more BMCs than its file
	// descriptor limit allows (simsFor). Each simulator listens on its own
	// loopback address (127.0.1.N), so 100,000 BMCs, one port each, do not
	// exceed one address's 64k ports.
	Sims int
	// Plaintext runs the coordinator with --insecure-plaintext (agents then
	// speak plain HTTP); the default is its mutual TLS.
	Plaintext bool
	// StatusRefresh is each agent's --status-refresh: the steady-state
	// status traffic is Hosts/StatusRefresh writes per second.
	StatusRefresh time.Duration
	// Steady is the window over which steady-state CPU is measured.
	Steady time.Duration
	// Detaches is how many detach → ack latencies are measured (0:
	// none).
	Detaches int
	// SampleEvery is the period of the available-count, RSS and heap
	// samples taken while registering (default 1 s).
	SampleEvery time.Duration
	// Operators is how many clients list every host every OperatorEvery
	// (default 2 s) for OperatorWindow (default 60 s) in each mode of
	// OperatorModes, with pages of OperatorChunk hosts (default
	// wire.DefaultPageSize), while one more client follows the fleet
	// watch; the RSS is read again OperatorSettle (default 20 s) after
	// each mode. 0: no operators.
	Operators                                     int
	OperatorEvery, OperatorWindow, OperatorSettle time.Duration
	OperatorChunk                                 int
	// CoordArgs and AgentArgs are added to every coordinator / agent.
	CoordArgs, AgentArgs []string
	// AgentEnv are KEY=VALUE variables added to every agent's environment
	// (e.g. GOMAXPROCS=1, GOGC=50), over this process's own.
	AgentEnv []string
	// ProfileDir, when set, receives CPU profiles taken while hosts
	// register (fleet_profile.go): ProfileFor long (default 20 s), from
	// ProfileAfter (default 5 s) after registration starts, of the
	// coordinator, every simulator and the first ProfileAgents agents
	// (default 3), as NAME.cpu.pprof.
	ProfileDir               string
	ProfileFor, ProfileAfter time.Duration
	ProfileAgents            int
	// FleetNice, when above 0, runs the agents and simulators at that
	// nice value (1–19) and the coordinator at 0: a model of a
	// coordinator on machines of its own (fleet_nice.go). 0: all at the
	// same priority.
	FleetNice int
	// Prefill is how many hosts the coordinator holds besides the
	// fleet's, created through the API before the agents start, with no
	// agent (fleet_prefill.go): the inventory of a larger fleet for the
	// operator, memory and detach figures. Their statuses are written
	// once, so the steady status traffic stays the fleet's. 0: none.
	Prefill int
	// Progress receives one line per phase; nil = none.
	Progress func(string)
}

// FleetResult is what a fleet run measured.
type FleetResult struct {
	Hosts, Racks, Sims int
	// Prefill is how many hosts without agents the coordinator held
	// besides the fleet's (FleetConfig.Prefill).
	Prefill int
	// FleetNice is the nice value the agents and simulators ran at (0:
	// that of the coordinator).
	FleetNice int
	// LeaseLosses counts the rack leases the agents lost from their start
	// until every host was available (their logs): each loss drops the
	// agent's host state, and its next session writes every host again.
	LeaseLosses int
	// TLS is false when the coordinator ran with --insecure-plaintext.
	TLS           bool
	StatusRefresh time.Duration
	// SteadyWindow is how long the steady figures were measured over.
	SteadyWindow time.Duration
	// Available is registration start → every host available.
	Available time.Duration
	// DetachP50/P99 are detach answered → ack visible in a watch, over
	// Detaches detaches (0: none measured, the latencies stay 0).
	DetachP50, DetachP99, DetachMax time.Duration
	Detaches                        int
	// SteadyCPU is the coordinator's CPU over the steady window, as a
	// fraction of one core; SteadyWrites its applied commands per second,
	// SteadyEntries its applied Raft log entries per second (a batch of
	// commands is one entry).
	SteadyCPU, SteadyWrites, SteadyEntries float64
	// CoordRSS* in KiB: peak while registering, when all were available,
	// at the end of the steady window.
	CoordRSSPeak, CoordRSSAvailable, CoordRSSSteady int64
	// AgentRSSMean/Max and SimRSSMean in KiB.
	AgentRSSMean, AgentRSSMax, SimRSSMean int64
	// ConnsPerAgentMax/Mean: established TCP connections from one agent to
	// the coordinator (sampled at the end of the steady window).
	ConnsPerAgentMax  int
	ConnsPerAgentMean float64
	// CPU seconds each kind of process used from its start until every
	// host was available (what bounds Available on a small machine).
	CPUToAvailableCoord, CPUToAvailableAgents, CPUToAvailableSims float64
	// CoordGoroutines at the end of the steady window.
	CoordGoroutines float64
	// CoordHeapPeak and CoordHeapInuse are the coordinator's Go heap in use
	// (bytes; go_memstats_heap_inuse_bytes) at its highest sample while
	// registering and at the end of the steady window: the live data plus
	// garbage not yet collected; RSS adds the collector's headroom and
	// memory not yet returned.
	CoordHeapPeak, CoordHeapInuse float64
	// Cores is the machine's CPU count; LoadWait and LoadSteady what
	// the machine did besides this run while hosts became available and
	// over the steady window.
	Cores                int
	LoadWait, LoadSteady MachineLoad
	// RequestsToAvailable are the coordinator's API requests by "METHOD
	// route" from the start until every host was available;
	// RequestsSteady over the steady window (counts, not rates).
	RequestsToAvailable, RequestsSteady map[string]float64
	// BMCToAvailable is the simulators' Redfish work from the start until
	// every host was available (the simulators' /sim/totals; zero with a
	// simulator that has none).
	BMCToAvailable BMCCounts
	// Samples are the available count (and RSS, heap) over time from the
	// start of registration until every host was available.
	Samples []FleetSample
	// Operators are the operator phases (fleet_operators.go), after the
	// detaches.
	Operators []OperatorPhase
}

// AgentCPUPerHost is the agents' CPU from their start until every host was
// available, per host.
func (r FleetResult) AgentCPUPerHost() time.Duration {
	return time.Duration(r.CPUToAvailableAgents / float64(r.Hosts) * float64(time.Second))
}

// SteadyCPUPer1000 is the steady coordinator CPU per 1,000 hosts, in
// percent of one core.
func (r FleetResult) SteadyCPUPer1000() float64 {
	return 100 * r.SteadyCPU / (float64(r.Hosts) / 1000)
}

// Inventory is every host the coordinator held: the fleet's and the
// prefilled ones.
func (r FleetResult) Inventory() int { return r.Hosts + r.Prefill }

// PerHost is bytes per host of the coordinator's inventory of a figure in
// KiB.
func (r FleetResult) PerHost(kib int64) float64 { return float64(kib) * 1024 / float64(r.Inventory()) }

// HeapPerHost is bytes per host of the coordinator's inventory.
func (r FleetResult) HeapPerHost(b float64) float64 { return b / float64(r.Inventory()) }

type fleet struct {
	cfg      FleetConfig
	coord    *proc
	coordURL string
	port     int
	admin    *client.Client
	token    string
	sims     []*proc
	simAddr  []string
	simBase  []int
	perSim   int
	agents   []*proc
	hc       *http.Client
	// prefilled is the host count per state the prefill left, which
	// the samples leave out (fleet_prefill.go).
	prefilled map[string]int
	// pprof is each profiled process's --pprof-addr, by profile name.
	pprofMu sync.Mutex
	pprof   map[string]string
}

func (f *fleet) say(format string, a ...any) {
	if f.cfg.Progress != nil {
		f.cfg.Progress(fmt.Sprintf(format, a...))
	}
}

// Fleet runs the fleet benchmark and stops every process it started.
func Fleet(ctx context.Context, cfg FleetConfig) (FleetResult, error) {
	if cfg.Hosts < 1 || cfg.Racks < 1 || cfg.Racks > cfg.Hosts {
		return FleetResult{}, fmt.Errorf("--hosts %d / --racks %d: need 1 ≤ racks ≤ hosts", cfg.Hosts, cfg.Racks)
	}
	if cfg.Prefill < 0 {
		return FleetResult{}, fmt.Errorf("--prefill %d: use a number of hosts, or 0 for none", cfg.Prefill)
	}
	if cfg.Detaches < 0 {
		return FleetResult{}, fmt.Errorf("--detaches %d: use a number of detaches, or 0 to measure none", cfg.Detaches)
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = time.Second
	}
	if cfg.OperatorEvery <= 0 {
		cfg.OperatorEvery = 2 * time.Second
	}
	if cfg.OperatorWindow <= 0 {
		cfg.OperatorWindow = time.Minute
	}
	if cfg.OperatorSettle <= 0 {
		cfg.OperatorSettle = 20 * time.Second
	}
	if cfg.OperatorChunk <= 0 {
		cfg.OperatorChunk = wire.DefaultPageSize
	}
	nofile := raiseNofile()
	cfg.Sims = simsFor(cfg.Hosts, cfg.Sims, nofile)
	if cfg.Sims > maxSimAddrs {
		return FleetResult{}, fmt.Errorf("--hosts %d needs %d bmcsim processes at %d open files each, more than %d loopback addresses: raise the open-files limit (ulimit -Hn)", cfg.Hosts, cfg.Sims, nofile, maxSimAddrs)
	}
	cfg.profileDefaults()
	if err := CheckFleetNice(cfg.FleetNice); err != nil {
		return FleetResult{}, err
	}
	if cfg.Plaintext {
		cfg.CoordArgs = append([]string{"--insecure-plaintext"}, cfg.CoordArgs...)
	}
	f := &fleet{cfg: cfg, hc: &http.Client{Timeout: 30 * time.Second}}
	defer f.stopAll()
	res := FleetResult{Hosts: cfg.Hosts, Racks: cfg.Racks, Sims: cfg.Sims, StatusRefresh: cfg.StatusRefresh, Cores: runtime.NumCPU(), FleetNice: cfg.FleetNice, Prefill: cfg.Prefill}
	if err := f.startCoordinator(ctx); err != nil {
		return res, err
	}
	// What the prefill cost the coordinator is not the fleet's: its CPU
	// and API requests until all are available count from here.
	var coordTicks0 int64
	var reqs0 map[string]float64
	if cfg.Prefill > 0 {
		if err := f.prefill(ctx); err != nil {
			return res, err
		}
		coordTicks0 = procstat.CPUTicks(f.coord.pid())
		reqs0, _ = f.requestCounts()
	}
	res.TLS = f.tls()
	if err := f.startSims(ctx); err != nil {
		return res, err
	}
	if err := f.startAgents(ctx); err != nil {
		return res, err
	}

	// Register every host and wait until all are available, sampling the
	// available count, the coordinator's RSS and Go heap all along.
	f.say("registering %d hosts over %d racks", cfg.Hosts, cfg.Racks)
	start, m0 := time.Now(), f.mark()
	smp := f.startSampler(start)
	profCtx, stopProfiles := context.WithCancel(ctx)
	profiles := f.startProfiles(profCtx, start)
	regErr := f.register(ctx)
	var waitErr error
	if regErr == nil {
		waitErr = f.waitAvailable(ctx, smp)
	}
	res.Available = time.Since(start)
	if regErr != nil || waitErr != nil {
		stopProfiles()
	}
	defer stopProfiles()
	defer profiles()
	res.LoadWait = f.loadSince(m0)
	res.Samples = smp.stop()
	if regErr != nil {
		return res, regErr
	}
	if waitErr != nil {
		return res, waitErr
	}
	res.CoordRSSAvailable = procstat.RSSKiB(f.coord.pid())
	res.CoordRSSPeak, res.CoordHeapPeak = peaks(res.Samples)
	res.CoordRSSPeak = max(res.CoordRSSPeak, res.CoordRSSAvailable)
	res.CPUToAvailableCoord = float64(procstat.CPUTicks(f.coord.pid())-coordTicks0) / procstat.TicksPerSecond
	for _, a := range f.agents {
		res.CPUToAvailableAgents += float64(procstat.CPUTicks(a.pid())) / procstat.TicksPerSecond
	}
	for _, p := range f.sims {
		res.CPUToAvailableSims += float64(procstat.CPUTicks(p.pid())) / procstat.TicksPerSecond
	}
	res.RequestsToAvailable, _ = f.requestCounts()
	if reqs0 != nil && res.RequestsToAvailable != nil {
		res.RequestsToAvailable = subCounts(res.RequestsToAvailable, reqs0)
	}
	res.LeaseLosses = f.leaseLosses()
	if c, ok := f.bmcCounts(); ok {
		res.BMCToAvailable = c
	}
	f.say("all %d hosts available after %.1f s", cfg.Hosts, res.Available.Seconds())

	if err := f.steady(ctx, &res); err != nil {
		return res, err
	}

	res.Detaches = cfg.Detaches
	if cfg.Detaches > 0 {
		f.say("detach → ack: %d detaches under the same status traffic", cfg.Detaches)
		lat, err := f.detaches(ctx)
		if err != nil {
			return res, err
		}
		res.DetachP50, res.DetachP99, res.DetachMax = spread(lat)
	}
	if cfg.Operators > 0 {
		var err error
		if res.Operators, err = f.operators(ctx); err != nil {
			return res, err
		}
	}
	return res, nil
}

// steady measures the steady state, where the agents only refresh
// statuses and renew leases: coordinator CPU, commands and Raft entries
// per second over cfg.Steady, then memory and connections.
func (f *fleet) steady(ctx context.Context, res *FleetResult) error {
	f.say("steady state: coordinator CPU over %s", f.cfg.Steady)
	if f.cfg.Steady < f.cfg.StatusRefresh {
		f.say("  the steady window (%s) is shorter than the status refresh (%s): hosts that became available together may all refresh outside it; use --steady %s or more", f.cfg.Steady, f.cfg.StatusRefresh, f.cfg.StatusRefresh)
	}
	select {
	case <-time.After(5 * time.Second): // let the last writes settle
	case <-ctx.Done():
		return ctx.Err()
	}
	cmds0, _ := f.metricSum("rackfence_fsm_commands_total")
	idx0, _ := f.metric("rackfence_raft_applied_index")
	reqs0, _ := f.requestCounts()
	t0, c0, m0 := time.Now(), procstat.CPUTicks(f.coord.pid()), f.mark()
	select {
	case <-time.After(f.cfg.Steady):
	case <-ctx.Done():
		return ctx.Err()
	}
	c1, el := procstat.CPUTicks(f.coord.pid()), time.Since(t0)
	res.LoadSteady = f.loadSince(m0)
	res.SteadyCPU = float64(c1-c0) / 100 / el.Seconds()
	res.SteadyWindow = el.Round(time.Second)
	if reqs1, err := f.requestCounts(); err == nil && reqs0 != nil {
		res.RequestsSteady = subCounts(reqs1, reqs0)
	}
	if n, err := f.metricSum("rackfence_fsm_commands_total"); err == nil {
		res.SteadyWrites = (n - cmds0) / el.Seconds()
	}
	if n, err := f.metric("rackfence_raft_applied_index"); err == nil {
		res.SteadyEntries = (n - idx0) / el.Seconds()
	}
	res.CoordRSSSteady = procstat.RSSKiB(f.coord.pid())
	res.ConnsPerAgentMax, res.ConnsPerAgentMean = f.connsPerAgent()
	res.CoordGoroutines, _ = f.metric("go_goroutines")
	res.CoordHeapInuse, _ = f.metric("go_memstats_heap_inuse_bytes")
	var sum int64
	for _, a := range f.agents {
		r := procstat.RSSKiB(a.pid())
		sum += r
		res.AgentRSSMax = max(res.AgentRSSMax, r)
	}
	res.AgentRSSMean = sum / int64(len(f.agents))
	sum = 0
	for _, s := range f.sims {
		sum += procstat.RSSKiB(s.pid())
	}
	res.SimRSSMean = sum / int64(len(f.sims))
	return nil
}

// raiseNofile sets this process's soft open-files limit to its hard limit,
// so the bmcsims and agents it starts inherit it (Go raises its own soft
// limit but gives children the original one unless the program sets it),
// and returns the limit.
func raiseNofile() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 1024
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
		}
	}
	return int(min(lim.Cur, 1<<20))
}
