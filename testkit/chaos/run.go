package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// Config configures one run.
type Config struct {
	Seed     int64
	Duration time.Duration // workload and faults
	Dir      string        // run directory (created)
	Bin      string        // directory holding the binaries
	Topo     Topology
	Clients  int // operator clients (default 3)
	// ConvergeBound is how long after the final heal every host must have
	// converged (default 60 s): a new leader (Raft's 1 s defaults), the
	// lease expiring (TTL + margin) and a reconcile round, with room for a
	// loaded 2-core machine.
	ConvergeBound time.Duration
	// LinearTimeout bounds porcupine's search per host (default 60 s).
	LinearTimeout time.Duration
	// FinalOutage, when set, ends the run with an outage of this length
	// before the final heal: every agent cut off every coordinator and the
	// leader killed, so convergence is measured from leases lost on every
	// rack and a leader election (0: the schedule's last fault, if still
	// on, is what the final heal lifts).
	FinalOutage time.Duration
	// Faults is the set of fault kinds the schedule draws from
	// (FaultsClassic, the default; FaultsStorage; FaultsAll). The storage
	// faults put each member's data dir on a tmpfs of its own (DataFSSize).
	Faults string
	Log    *slog.Logger // default: JSON to DIR/harness.log
}

// DataFSSize is each member's tmpfs when a run draws storage faults: room
// for a short run's log and snapshots, small enough to fill in a moment.
const DataFSSize = 64 << 20

// DefaultTopology is three coordinators, two racks of four hosts, a 5 s
// lease TTL.
func DefaultTopology() Topology {
	return Topology{Coordinators: 3, Racks: []string{"r1", "r2"}, HostsPerRack: 4, LeaseTTL: 5 * time.Second}
}

// Result is what a run measured and found. It is written to DIR/result.json.
type Result struct {
	Seed          int64            `json:"seed"`
	Duration      string           `json:"duration"`
	Dir           string           `json:"dir"`
	Faults        map[string]int   `json:"faults"`      // applied, by kind
	FaultErrors   []string         `json:"faultErrors"` // faults that could not be applied fully
	FaultLog      []string         `json:"faultLog"`    // each fault applied: what it hit and what its heal did
	Ops           int              `json:"ops"`
	OpsByResult   map[string]int   `json:"opsByResult"`
	OpsByKind     map[string]int   `json:"opsByKind"`
	Mutations     int              `json:"mutations"` // audited BMC calls checked
	LeaseRecords  int              `json:"leaseRecords"`
	Linear        []LinearResult   `json:"linear"`
	Violations    []Violation      `json:"violations"`
	ByChecker     map[string]int   `json:"violationsByChecker"`
	Converge      map[string]int64 `json:"convergeMillis"` // host → ms after the final heal
	ConvergeP50   int64            `json:"convergeP50Millis"`
	ConvergeMax   int64            `json:"convergeMaxMillis"`
	ConvergeBound string           `json:"convergeBound"`
}

// OK reports whether no checker found anything.
func (r *Result) OK() bool { return len(r.Violations) == 0 }

// Checkers are the checker names, in report order.
var Checkers = []string{"fencing", "linearizability", "durability", "liveness", "logs", "storage", "connections", "firmware"}

// Run sets up the network and cluster, runs the workload under the seeded
// schedule, heals, waits for convergence, stops everything and checks.
// An error means the run could not be carried out (setup failed); what
// the checkers found is in Result.Violations.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	switch cfg.Faults {
	case FaultsFirmware:
		return RunFlash(ctx, cfg)
	case FaultsAll:
		res, err := runSchedule(ctx, cfg)
		if err != nil {
			return res, err
		}
		fcfg := cfg
		fcfg.Dir, fcfg.Log = filepath.Join(cfg.Dir, "flash"), nil
		fr, err := RunFlash(ctx, fcfg)
		if err != nil {
			return res, fmt.Errorf("flash scenario: %w", err)
		}
		for k, v := range fr.Faults {
			res.Faults[k] += v
		}
		res.FaultLog = append(res.FaultLog, fr.FaultLog...)
		res.Violations = append(res.Violations, fr.Violations...)
		for k, v := range fr.ByChecker {
			res.ByChecker[k] += v
		}
		return res, writeJSON(filepath.Join(cfg.Dir, "result.json"), res)
	}
	return runSchedule(ctx, cfg)
}

// runSchedule is Run for the classic and storage fault sets.
func runSchedule(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Clients == 0 {
		cfg.Clients = 3
	}
	if cfg.ConvergeBound == 0 {
		cfg.ConvergeBound = 60 * time.Second
	}
	if cfg.LinearTimeout == 0 {
		cfg.LinearTimeout = 60 * time.Second
	}
	if cfg.Topo.Coordinators == 0 {
		cfg.Topo = DefaultTopology()
	}
	log, done, err := openRunDir(cfg)
	if err != nil {
		return nil, err
	}
	defer done()
	res := &Result{Seed: cfg.Seed, Duration: cfg.Duration.String(), Dir: cfg.Dir, Faults: map[string]int{},
		OpsByResult: map[string]int{}, OpsByKind: map[string]int{}, ByChecker: map[string]int{},
		Converge: map[string]int64{}, ConvergeBound: cfg.ConvergeBound.String()}
	kinds, err := KindsOf(cfg.Faults)
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if (k == FaultDiskFull || k == FaultDamagedRestart) && cfg.Topo.DataFS == 0 {
			cfg.Topo.DataFS = DataFSSize
		}
	}
	faults := ScheduleKinds(cfg.Seed, cfg.Duration, cfg.Topo.Racks, kinds)
	if err := writeJSON(filepath.Join(cfg.Dir, "schedule.json"), faults); err != nil {
		return nil, err
	}

	nw, err := NewNet(cfg.Topo.Nodes())
	if err != nil {
		return nil, err
	}
	defer nw.Close()
	setup, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	c, err := StartCluster(setup, cfg.Dir, cfg.Bin, nw, cfg.Topo, log)
	if c != nil {
		defer c.StopAll()
	}
	if err != nil {
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	hosts := cfg.Topo.Hosts()
	for _, h := range hosts {
		if _, _, err := c.Observer.ApplyHost(setup, c.Spec(h, true, InitialTag)); err != nil {
			return nil, fmt.Errorf("create host %s: %w", h.Name, err)
		}
	}
	if err := c.StartAgents(); err != nil {
		return nil, err
	}
	if err := until(setup, "every host available", func() error {
		for _, h := range hosts {
			got, err := c.Observer.GetHost(setup, h.Name)
			if err != nil {
				return err
			}
			if got.Status == nil || got.Status.ProvisioningState != wire.StateAvailable || got.Status.OperationalStatus != wire.OpOK {
				return fmt.Errorf("host %s: status %+v", h.Name, got.Status)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	log.Info("cluster up", "net", nw.Prefix, "faults", len(faults))

	// Lease history, polled through the run so the bounded history the
	// coordinator keeps never drops a record we need.
	leases := map[string]map[uint64]wire.LeaseRecord{}
	for _, r := range cfg.Topo.Racks {
		leases[r] = map[uint64]wire.LeaseRecord{}
	}
	var lmu sync.Mutex
	pollLeases := func(pctx context.Context) {
		for _, r := range cfg.Topo.Racks {
			qctx, qc := context.WithTimeout(pctx, 3*time.Second)
			l, err := c.Observer.LeaseHistory(qctx, r)
			qc()
			if err == nil {
				lmu.Lock()
				MergeLeases(leases[r], l.Items)
				lmu.Unlock()
			}
		}
	}
	hist := &History{}
	wctx, wcancel := context.WithTimeout(ctx, cfg.Duration)
	defer wcancel()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for wctx.Err() == nil {
			pollLeases(wctx)
			select {
			case <-wctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	nem := NewNemesis(c, log)
	t0 := time.Now()
	go func() { defer wg.Done(); nem.Run(wctx, t0, faults) }()
	wl := &Workload{C: c, Hist: hist, Clients: cfg.Clients, Seed: cfg.Seed, OpTimeout: 8 * time.Second}
	go func() {
		defer wg.Done()
		if err := wl.Run(wctx); err != nil {
			log.Error("workload", "err", err)
		}
	}()
	wg.Wait()
	if cfg.FinalOutage > 0 && ctx.Err() == nil {
		var agents []string
		for _, a := range c.Agents {
			agents = append(agents, a.Rack+a.Slot)
		}
		err := nw.Cut(agents, nem.coordNodes())
		if ld := nem.leader(ctx); ld >= 0 {
			c.Coords[ld].Kill()
		}
		log.Info("final outage", "for", cfg.FinalOutage, "err", err)
		res.Faults["final-outage"]++
		select {
		case <-ctx.Done():
		case <-time.After(cfg.FinalOutage):
		}
	}

	// Final heal, then liveness: every host converges within the bound.
	if err := nem.Heal(); err != nil {
		log.Error("final heal", "err", err)
	}
	healed := time.Now()
	final := map[string]*HostView{}
	var vs []Violation
	vs = append(vs, converge(ctx, c, hosts, healed, cfg.ConvergeBound, res, hist, final)...)
	vs = append(vs, membersCaughtUp(ctx, c, healed.Add(cfg.ConvergeBound))...)
	log.Info("converged", "hosts", len(res.Converge), "p50ms", res.ConvergeP50, "maxms", res.ConvergeMax)

	// Stop the agents first (they release their leases), then read the
	// lease history one last time, then the audits.
	for _, a := range c.Agents {
		a.Proc.Stop(15 * time.Second)
	}
	fctx, fc := context.WithTimeout(ctx, 30*time.Second)
	pollLeases(fctx)
	fc()
	c.StopAll()

	byRack := map[string][]wire.LeaseRecord{}
	for r, m := range leases {
		for _, rec := range m {
			byRack[r] = append(byRack[r], rec)
		}
		sort.Slice(byRack[r], func(i, j int) bool { return byRack[r][i].Epoch < byRack[r][j].Epoch })
		res.LeaseRecords += len(byRack[r])
	}
	var muts []Mutation
	for _, r := range cfg.Topo.Racks {
		lines, err := bmcsim.ReadAudit(c.AuditFile(r))
		if err != nil {
			return nil, err
		}
		m, err := Mutations(r, lines)
		if err != nil {
			return nil, err
		}
		muts = append(muts, m...)
	}
	res.Mutations = len(muts)
	ops := hist.Ops()
	res.Ops = len(ops)
	for _, op := range ops {
		res.OpsByResult[op.Result]++
		res.OpsByKind[op.Kind]++
	}
	for _, a := range nem.Applied() {
		res.Faults[a.Kind]++
		res.FaultLog = append(res.FaultLog, a.Fault.String()+": "+a.Detail)
		if a.Err != "" {
			res.FaultErrors = append(res.FaultErrors, a.Fault.String()+": "+a.Err)
		}
	}
	vs = append(vs, CheckFencing(byRack, muts)...)
	lin, lvs := CheckLinear(ops, cfg.LinearTimeout, cfg.Dir)
	res.Linear = lin
	vs = append(vs, lvs...)
	vs = append(vs, CheckDurable(ops, final)...)
	vs = append(vs, CheckLogs(filepath.Join(cfg.Dir, "logs"))...)
	vs = append(vs, nem.Violations()...)
	res.Violations = vs
	for _, v := range vs {
		res.ByChecker[v.Checker]++
	}
	err = errors.Join(
		hist.WriteFile(filepath.Join(cfg.Dir, "history.jsonl")),
		writeJSON(filepath.Join(cfg.Dir, "leases.json"), byRack),
		writeJSON(filepath.Join(cfg.Dir, "mutations.json"), muts),
		writeJSON(filepath.Join(cfg.Dir, "faults.json"), nem.Applied()),
		writeJSON(filepath.Join(cfg.Dir, "result.json"), res),
	)
	return res, err
}

// converge waits until every host is converged or the bound passes after
// healed, recording each host's time, and reads every host a last time
// into final (those reads join the history as client -1).
//
// A host is converged when its status carries the rack's current lease
// epoch, its detach intent is acknowledged or (without one) every intent it
// has is, and, unless it is detached or drained, it is available/ok with
// status and BMC power matching Online.
func converge(ctx context.Context, c *Cluster, hosts []HostSpec, healed time.Time, bound time.Duration,
	res *Result, hist *History, final map[string]*HostView) []Violation {
	var out []Violation
	deadline := healed.Add(bound)
	pending := map[string]HostSpec{}
	for _, h := range hosts {
		pending[h.Name] = h
	}
	last := map[string]string{}
	for len(pending) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		epochs := map[string]uint64{}
		qctx, qc := context.WithTimeout(ctx, 5*time.Second)
		if l, err := c.Observer.Racks(qctx); err == nil {
			for _, r := range l.Items {
				epochs[r.Name] = r.Epoch
			}
		}
		for name, h := range pending {
			got, err := c.Observer.GetHost(qctx, name)
			if err != nil {
				last[name] = err.Error()
				continue
			}
			why := notConverged(c, h, got, epochs[h.Rack])
			if why == "" {
				res.Converge[name] = time.Since(healed).Milliseconds()
				delete(pending, name)
			} else {
				last[name] = why
			}
		}
		qc()
		time.Sleep(200 * time.Millisecond)
	}
	for name := range pending {
		out = append(out, Violation{Checker: "liveness", What: fmt.Sprintf("host %s not converged %s after the final heal: %s", name, bound, last[name])})
	}
	var ms []int64
	for _, v := range res.Converge {
		ms = append(ms, v)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i] < ms[j] })
	if len(ms) > 0 {
		res.ConvergeP50, res.ConvergeMax = ms[len(ms)/2], ms[len(ms)-1]
	}
	// The final reads: linearizable reads through the observer.
	for _, h := range hosts {
		rctx, rc := context.WithTimeout(ctx, 10*time.Second)
		op := Op{Client: -1, Host: h.Name, Kind: OpRead, Invoke: time.Now().UnixNano()}
		got, err := c.Observer.GetHost(rctx, h.Name)
		rc()
		op.Return = time.Now().UnixNano()
		op.Result = Classify(err)
		if err != nil {
			op.Err = err.Error()
			out = append(out, Violation{Checker: "liveness", What: fmt.Sprintf("host %s: final read failed: %v", h.Name, err)})
		} else {
			op.Read = ViewOf(got)
			final[h.Name] = op.Read
		}
		hist.Add(op)
	}
	return out
}

func notConverged(c *Cluster, h HostSpec, got *wire.Host, epoch uint64) string {
	st := got.Status
	if st == nil {
		return "no status"
	}
	if epoch == 0 {
		return "rack " + h.Rack + " has no lease holder"
	}
	if st.Epoch != epoch {
		return fmt.Sprintf("status epoch %d, lease epoch %d", st.Epoch, epoch)
	}
	if in := got.Intents; in != nil {
		// A detached host is another tier's: the agent acknowledges the
		// detach and acts on nothing else (agent/hoststate/DESIGN.md), so a
		// drain or resume behind it stays pending by design.
		if in.Detach != nil {
			if !in.Detach.Acknowledged {
				return "detach intent not acknowledged"
			}
			return ""
		}
		for kind, it := range map[string]*wire.Intent{"drain": in.Drain, "resume": in.Resume} {
			if it != nil && !it.Acknowledged {
				return kind + " intent not acknowledged"
			}
		}
		if in.Drain != nil {
			return ""
		}
	}
	if st.ProvisioningState != wire.StateAvailable || st.OperationalStatus != wire.OpOK {
		return fmt.Sprintf("state %s/%s (%s)", st.ProvisioningState, st.OperationalStatus, st.ErrorMessage)
	}
	if st.PoweredOn != got.Online {
		return fmt.Sprintf("status poweredOn=%v, spec online=%v", st.PoweredOn, got.Online)
	}
	var sim bmcsim.State
	if err := getJSON(c.SimStateURL(h.Rack, h.Index), &sim); err != nil {
		return "bmc state: " + err.Error()
	}
	if (sim.Power == "On") != got.Online {
		return fmt.Sprintf("BMC power %s, spec online=%v", sim.Power, got.Online)
	}
	return ""
}

func getJSON(url string, v any) error {
	resp, err := probe.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %d %s", url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Summary is a short human report of a result.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %s, run dir %s\n", r.Seed, r.Duration, r.Dir)
	kinds := make([]string, 0, len(r.Faults))
	n := 0
	for k, v := range r.Faults {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, v))
		n += v
	}
	sort.Strings(kinds)
	fmt.Fprintf(&b, "faults: %d (%s)\n", n, strings.Join(kinds, " "))
	for _, l := range r.FaultLog {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "operations: %d (ok %d, fail %d, info %d); BMC mutations checked: %d; lease records: %d\n",
		r.Ops, r.OpsByResult[ResultOK], r.OpsByResult[ResultFail], r.OpsByResult[ResultInfo], r.Mutations, r.LeaseRecords)
	fmt.Fprintf(&b, "convergence after the final heal: p50 %d ms, max %d ms (bound %s)\n", r.ConvergeP50, r.ConvergeMax, r.ConvergeBound)
	for _, ch := range Checkers {
		fmt.Fprintf(&b, "checker %-16s %d violations\n", ch, r.ByChecker[ch])
	}
	for i, v := range r.Violations {
		if i == 20 {
			fmt.Fprintf(&b, "… %d more in result.json\n", len(r.Violations)-20)
			break
		}
		fmt.Fprintf(&b, "  %s\n", v)
	}
	if r.OK() {
		b.WriteString("PASS\n")
	} else {
		b.WriteString("FAIL\n")
	}
	return b.String()
}
