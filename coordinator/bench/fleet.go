package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/procnet"
)

// FleetConfig sizes a fleet run: one coordinator, Racks real agent
// processes, Sims real rackfence-bmcsim processes serving Hosts BMCs.
type FleetConfig struct {
	// Bin holds rackfence-coordinator, rackfence-agent, rackfence-bmcsim.
	Bin string
	// Dir is the work directory (data dir, tokens, process logs).
	Dir          string
	Hosts, Racks int
	// Sims is how many bmcsim processes share the BMCs (each BMC is one
	// listening port; a process here may hold 20,000 file descriptors).
	Sims int
	// StatusRefresh is each agent's --status-refresh: the steady-state
	// status traffic is Hosts/StatusRefresh writes per second.
	StatusRefresh time.Duration
	// Steady is the window over which steady-state CPU is measured.
	Steady time.Duration
	// Detaches is how many detach → ack latencies are measured.
	Detaches int
	// CoordArgs and AgentArgs are added to every coordinator / agent.
	CoordArgs, AgentArgs []string
	// Progress receives one line per phase; nil = none.
	Progress func(string)
}

// FleetResult is what a fleet run measured.
type FleetResult struct {
	Hosts, Racks int
	// Available is registration start → every host available.
	Available time.Duration
	// DetachP50/P99 are detach answered → ack visible in a watch.
	DetachP50, DetachP99, DetachMax time.Duration
	// SteadyCPU is the coordinator's CPU over the steady window, as a
	// fraction of one core; SteadyWrites its applied commands per second.
	SteadyCPU, SteadyWrites float64
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
	// CoordHeapInuse is the coordinator's Go heap in use (bytes) at the end
	// of the steady window: the live data plus garbage not yet collected;
	// RSS adds the collector's headroom and memory not yet returned.
	CoordHeapInuse float64
}

type fleet struct {
	cfg      FleetConfig
	coord    *proc
	coordURL string
	port     int
	admin    *client.Client
	token    string
	sims     []*proc
	simBase  []int
	perSim   int
	agents   []*proc
	hc       *http.Client
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
	if cfg.Sims < 1 {
		cfg.Sims = 1
	}
	if cfg.Detaches < 1 {
		cfg.Detaches = 200
	}
	f := &fleet{cfg: cfg, hc: &http.Client{Timeout: 30 * time.Second}}
	defer f.stopAll()
	res := FleetResult{Hosts: cfg.Hosts, Racks: cfg.Racks}
	if err := f.startCoordinator(ctx); err != nil {
		return res, err
	}
	if err := f.startSims(ctx); err != nil {
		return res, err
	}
	if err := f.startAgents(ctx); err != nil {
		return res, err
	}

	// Register every host and wait until all are available, sampling the
	// coordinator's RSS all along.
	f.say("registering %d hosts over %d racks", cfg.Hosts, cfg.Racks)
	start := time.Now()
	peak := int64(0)
	stopSample := make(chan struct{})
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		for {
			if r := rssKiB(f.coord.pid()); r > peak {
				peak = r
			}
			select {
			case <-stopSample:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	regErr := f.register(ctx)
	var waitErr error
	if regErr == nil {
		waitErr = f.waitAvailable(ctx, start)
	}
	res.Available = time.Since(start)
	close(stopSample)
	sampled.Wait()
	if regErr != nil {
		return res, regErr
	}
	if waitErr != nil {
		return res, waitErr
	}
	res.CoordRSSPeak, res.CoordRSSAvailable = peak, rssKiB(f.coord.pid())
	res.CPUToAvailableCoord = float64(cpuTicks(f.coord.pid())) / 100
	for _, a := range f.agents {
		res.CPUToAvailableAgents += float64(cpuTicks(a.pid())) / 100
	}
	for _, p := range f.sims {
		res.CPUToAvailableSims += float64(cpuTicks(p.pid())) / 100
	}
	f.say("all %d hosts available after %.1f s", cfg.Hosts, res.Available.Seconds())

	// Steady state: the agents only refresh statuses.
	f.say("steady state: coordinator CPU over %s", cfg.Steady)
	select {
	case <-time.After(5 * time.Second): // let the last writes settle
	case <-ctx.Done():
		return res, ctx.Err()
	}
	cmds0, _ := f.metricSum("rackfence_fsm_commands_total")
	t0, c0 := time.Now(), cpuTicks(f.coord.pid())
	select {
	case <-time.After(cfg.Steady):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	c1, el := cpuTicks(f.coord.pid()), time.Since(t0)
	res.SteadyCPU = float64(c1-c0) / 100 / el.Seconds()
	if n, err := f.metricSum("rackfence_fsm_commands_total"); err == nil {
		res.SteadyWrites = (n - cmds0) / el.Seconds()
	}
	res.CoordRSSSteady = rssKiB(f.coord.pid())
	res.ConnsPerAgentMax, res.ConnsPerAgentMean = f.connsPerAgent()
	res.CoordGoroutines, _ = f.metric("go_goroutines")
	res.CoordHeapInuse, _ = f.metric("go_memstats_heap_inuse_bytes")
	var sum int64
	for _, a := range f.agents {
		r := rssKiB(a.pid())
		sum += r
		if r > res.AgentRSSMax {
			res.AgentRSSMax = r
		}
	}
	res.AgentRSSMean = sum / int64(len(f.agents))
	sum = 0
	for _, s := range f.sims {
		sum += rssKiB(s.pid())
	}
	res.SimRSSMean = sum / int64(len(f.sims))

	f.say("detach → ack: %d detaches under the same status traffic", cfg.Detaches)
	lat, err := f.detaches(ctx)
	if err != nil {
		return res, err
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	res.DetachP50, res.DetachP99, res.DetachMax = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	return res, nil
}

func (f *fleet) startCoordinator(ctx context.Context) error {
	var err error
	if f.port, err = freePort(); err != nil {
		return err
	}
	rp, err := freePort()
	if err != nil {
		return err
	}
	scheme := "https" // the secure default; --coordinator-arg --insecure-plaintext measures plain HTTP
	for _, a := range f.cfg.CoordArgs {
		if a == "--insecure-plaintext" {
			scheme = "http"
		}
	}
	f.coordURL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, f.port)
	data := filepath.Join(f.cfg.Dir, "coord")
	args := append([]string{"--node-id", "fleet1", "--data-dir", data, "--http-addr", fmt.Sprintf("127.0.0.1:%d", f.port),
		"--raft-addr", fmt.Sprintf("127.0.0.1:%d", rp), "--log-level", "warn"}, f.cfg.CoordArgs...)
	if f.coord, err = startProc(f.cfg.Dir, "coordinator", filepath.Join(f.cfg.Bin, "rackfence-coordinator"), args...); err != nil {
		return err
	}
	f.say("coordinator pid %d at %s", f.coord.pid(), f.coordURL)
	tokFile := filepath.Join(data, "admin.token")
	return f.until(ctx, 60*time.Second, "the coordinator accepting writes", func() error {
		if f.coord.exited() {
			return fmt.Errorf("coordinator exited:\n%s", f.coord.tail())
		}
		tok, err := client.ReadTokenFile(tokFile)
		if err != nil {
			return errRetry
		}
		f.token, f.hc = tok, NewHTTPClientFor(64, tok)
		if f.admin, err = client.New(client.Config{Coordinator: f.coordURL, Token: tok, HTTPClient: NewHTTPClient(64), Timeout: 30 * time.Second}); err != nil {
			return err
		}
		if err := f.admin.SetCredentials(ctx, "bmc", api.Credentials{Username: "admin", Password: "password"}); err != nil {
			return errRetry
		}
		return nil
	})
}

var listeningRe = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)-`)

func (f *fleet) startSims(ctx context.Context) error {
	f.perSim = (f.cfg.Hosts + f.cfg.Sims - 1) / f.cfg.Sims
	for j := 0; j < f.cfg.Sims; j++ {
		var err error
		// Port ranges below the kernel's ephemeral range (32768+), where
		// outgoing connections do not take ports; another process on this
		// shared machine may still hold one: then try another range.
		n := min(f.perSim, f.cfg.Hosts-j*f.perSim)
		for try := 0; try < 8; try++ {
			base := 10000 + j*f.perSim
			if try > 0 || base+n > 32768 {
				base = 10000 + rand.IntN(max(1, 32768-10000-n))
			}
			if err = f.startSim(ctx, j, base); err == nil || !strings.Contains(err.Error(), "ports not available") {
				break
			}
		}
		if err != nil {
			return err
		}
	}
	f.say("%d bmcsim processes serving %d BMCs", f.cfg.Sims, f.cfg.Hosts)
	return nil
}

func (f *fleet) startSim(ctx context.Context, j, basePort int) error {
	n := min(f.perSim, f.cfg.Hosts-j*f.perSim)
	p, err := startProc(f.cfg.Dir, fmt.Sprintf("bmcsim%d", j), filepath.Join(f.cfg.Bin, "rackfence-bmcsim"),
		"--hosts", strconv.Itoa(n), "--base-port", strconv.Itoa(basePort), "--mac-prefix", fmt.Sprintf("52:54:01:%02x", j))
	if err != nil {
		return err
	}
	base := 0
	if err := f.until(ctx, 120*time.Second, "bmcsim "+strconv.Itoa(j)+" listening", func() error {
		if p.exited() {
			return fmt.Errorf("bmcsim exited:\n%s", p.tail())
		}
		m := listeningRe.FindStringSubmatch(p.output())
		if m == nil {
			return errRetry
		}
		base, _ = strconv.Atoi(m[1])
		return nil
	}); err != nil {
		p.stop(time.Second)
		return err
	}
	f.sims = append(f.sims, p)
	f.simBase = append(f.simBase, base)
	return nil
}

func (f *fleet) rack(r int) string { return fmt.Sprintf("r%03d", r) }

func (f *fleet) startAgents(ctx context.Context) error {
	for r := 0; r < f.cfg.Racks; r++ {
		tr, err := f.admin.CreateToken(ctx, api.TokenRequest{Role: api.RoleAgent, Rack: f.rack(r)})
		if err != nil {
			return fmt.Errorf("agent token for %s: %w", f.rack(r), err)
		}
		tf := filepath.Join(f.cfg.Dir, "agent-"+f.rack(r)+".token")
		if err := os.WriteFile(tf, []byte(tr.Token+"\n"), 0o600); err != nil {
			return err
		}
		args := append([]string{"--coordinator", f.coordURL, "--token-file", tf, "--rack", f.rack(r),
			"--agent-id", "fleet-" + f.rack(r), "--log-level", "warn", "--status-refresh", f.cfg.StatusRefresh.String()}, f.cfg.AgentArgs...)
		p, err := startProc(f.cfg.Dir, "agent-"+f.rack(r), filepath.Join(f.cfg.Bin, "rackfence-agent"), args...)
		if err != nil {
			return err
		}
		f.agents = append(f.agents, p)
	}
	f.say("%d agents started", f.cfg.Racks)
	// Every agent holds its rack's lease before hosts arrive.
	return f.until(ctx, 120*time.Second, "every agent holding its lease", func() error {
		for _, a := range f.agents {
			if a.exited() {
				return fmt.Errorf("%s exited:\n%s", a.name, a.tail())
			}
		}
		n, err := f.metric("rackfence_leases_held")
		if err != nil || int(n) < f.cfg.Racks {
			return errRetry
		}
		return nil
	})
}

// hostSpec is host i: rack i mod Racks, BMC i of the sims.
func (f *fleet) hostSpec(i int) *api.Host {
	j, k := i/f.perSim, i%f.perSim
	return &api.Host{Name: fmt.Sprintf("h%06d", i), Rack: f.rack(i % f.cfg.Racks), Online: true,
		BMC:            api.BMC{Address: fmt.Sprintf("redfish+http://127.0.0.1:%d/redfish/v1/Systems/1", f.simBase[j]+k), Credentials: "bmc"},
		BootMACAddress: fmt.Sprintf("52:54:01:%02x:%02x:%02x", j, k>>8, k&0xff)}
}

func (f *fleet) register(ctx context.Context) error {
	ch := make(chan int)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if _, _, err := f.admin.ApplyHost(ctx, f.hostSpec(i)); err != nil {
					select {
					case errc <- fmt.Errorf("register h%06d: %w", i, err):
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < f.cfg.Hosts; i++ {
		select {
		case ch <- i:
		case err := <-errc:
			close(ch)
			wg.Wait()
			return err
		}
	}
	close(ch)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

func (f *fleet) waitAvailable(ctx context.Context, start time.Time) error {
	last := time.Now()
	return f.until(ctx, 30*time.Minute, "every host available", func() error {
		n, err := f.metricLabel("rackfence_hosts", `state="available"`)
		if err != nil {
			return errRetry
		}
		if time.Since(last) > 5*time.Second {
			f.say("  %.0f s: %.0f available", time.Since(start).Seconds(), n)
			last = time.Now()
		}
		if int(n) >= f.cfg.Hosts {
			return nil
		}
		return errRetry
	})
}

// detaches detaches hosts spread over ten racks one at a time and measures
// the API answer → the agent's ack visible in a watch of the rack.
func (f *fleet) detaches(ctx context.Context) ([]time.Duration, error) {
	racks := min(10, f.cfg.Racks)
	acked := make(chan string, 64)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ready sync.WaitGroup
	for r := 0; r < racks; r++ {
		ready.Add(1)
		go f.followAcks(wctx, f.rack(r), acked, &ready)
	}
	ready.Wait()
	var lat []time.Duration
	perRack := f.cfg.Hosts / f.cfg.Racks
	for j := 0; j < f.cfg.Detaches; j++ {
		// host j-th of rack j%racks: i ≡ rack (mod Racks)
		i := (j%racks + (j/racks)%perRack*f.cfg.Racks) % f.cfg.Hosts
		name := fmt.Sprintf("h%06d", i)
		if _, err := f.admin.Detach(ctx, name, api.IntentRequest{Reason: "fleet bench"}); err != nil {
			return nil, fmt.Errorf("detach %s: %w", name, err)
		}
		answered := time.Now()
	wait:
		for {
			select {
			case n := <-acked:
				if n == name {
					break wait
				}
			case <-time.After(60 * time.Second):
				return nil, fmt.Errorf("no ack for the detach of %s within 60 s", name)
			}
		}
		lat = append(lat, time.Since(answered))
	}
	return lat, nil
}

func (f *fleet) followAcks(ctx context.Context, rack string, out chan<- string, ready *sync.WaitGroup) {
	seen := map[string]uint64{}
	var index uint64
	first := true
	for ctx.Err() == nil {
		r, err := f.admin.Watch(ctx, rack, index, 30*time.Second)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for _, h := range r.Hosts {
			if d := h.Intents; d != nil && d.Detach != nil && d.Detach.Acknowledged && seen[h.Name] != d.Detach.CreatedIndex {
				seen[h.Name] = d.Detach.CreatedIndex
				if !first {
					select {
					case out <- h.Name:
					case <-ctx.Done():
						return
					}
				}
			}
		}
		if first {
			first = false
			ready.Done()
		}
		index = r.Index
	}
}

// connsPerAgent counts each agent's established connections to the
// coordinator's API port.
func (f *fleet) connsPerAgent() (maxN int, mean float64) {
	est := procnet.EstablishedTo(f.port)
	total := 0
	for _, a := range f.agents {
		n := 0
		for ino := range procnet.SocketInodes(a.pid()) {
			if est[ino] {
				n++
			}
		}
		total += n
		maxN = max(maxN, n)
	}
	return maxN, float64(total) / float64(len(f.agents))
}

func (f *fleet) stopAll() {
	var wg sync.WaitGroup
	for _, p := range append(append([]*proc{}, f.agents...), f.sims...) {
		wg.Add(1)
		go func() { defer wg.Done(); p.stop(5 * time.Second) }()
	}
	wg.Wait()
	if f.coord != nil {
		f.coord.stop(10 * time.Second)
	}
}

var errRetry = fmt.Errorf("not yet")

func (f *fleet) until(ctx context.Context, d time.Duration, what string, cond func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if err != errRetry {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", d, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// metrics scrapes the coordinator's /metrics and calls fn per sample line.
func (f *fleet) metrics(fn func(name, labels string, v float64)) error {
	req, _ := http.NewRequest(http.MethodGet, f.coordURL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	resp, err := f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return fmt.Errorf("/metrics: %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		name, labels := line[:sp], ""
		if b := strings.IndexByte(name, '{'); b >= 0 {
			name, labels = name[:b], name[b:]
		}
		fn(name, labels, v)
	}
	return sc.Err()
}

func (f *fleet) metric(name string) (float64, error) { return f.metricLabel(name, "") }

// metricLabel is the sample of name whose labels contain label ("" = any).
func (f *fleet) metricLabel(name, label string) (float64, error) {
	var v float64
	found := false
	err := f.metrics(func(n, l string, x float64) {
		if n == name && strings.Contains(l, label) {
			v, found = x, true
		}
	})
	if err == nil && !found {
		err = fmt.Errorf("%s%s not on /metrics", name, label)
	}
	return v, err
}

// metricSum adds every sample of name.
func (f *fleet) metricSum(name string) (float64, error) {
	var v float64
	err := f.metrics(func(n, _ string, x float64) {
		if n == name {
			v += x
		}
	})
	return v, err
}
