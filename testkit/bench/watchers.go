package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/procstat"
)

// WatchersConfig sizes one watchers run: a real coordinator (mutual TLS),
// Watchers long-poll watchers of one rack over its API, Writes writes of
// new hosts into that rack, one at a time.
type WatchersConfig struct {
	// Bin holds rackfence-coordinator; Dir is the work directory.
	Bin, Dir string
	// Watchers is how many watchers follow the rack (0: writes alone).
	Watchers int
	// Writes is how many hosts are created in the watched rack.
	Writes int
	// Hosts is how many hosts the rack holds before the watchers start.
	Hosts int
	// PerClient is how many watchers share one client (one HTTP/2
	// connection pool), as watchers of one process would.
	PerClient int
	// After is how long after the watchers closed the last RSS sample is
	// taken (the run also samples at half of it).
	After time.Duration
	// WriterBin, when set, is a rackfence-load that makes the writes in a
	// process of its own (mode put-hosts): the write latencies then do not
	// include waiting behind the watchers' goroutines in this process.
	WriterBin string
	// Stream makes each watcher follow the rack with one streamed watch
	// (client.FollowRack) instead of a long poll per answer.
	Stream bool
	// DialFirst makes each client make one request before its watchers
	// open, so they share its connection. Without it the watchers' first
	// requests, sent at once, each dial a TLS connection of their own
	// (Go's HTTP/2 client then keeps one and closes the others): about
	// one handshake per watcher for the member.
	DialFirst bool
	// CoordArgs are added to the coordinator (e.g. --pprof-addr).
	CoordArgs []string
	// CrowdNice, when above 0, runs the watchers (this process) at that
	// nice value once the coordinator started, and the writer process
	// back at 0 (which needs root): a model of watchers on other
	// machines, which do not take the coordinator's CPU.
	CrowdNice int
	// Progress receives one line per phase; nil = none.
	Progress func(string)
}

// WatchersResult is what one watchers run measured.
type WatchersResult struct {
	Watchers, Writes int
	// Stream: the watchers streamed (FollowRack) instead of long-polling.
	Stream bool
	// P50, P99, Max are the writes' latencies (request to answer).
	P50, P99, Max time.Duration
	// CPU is the coordinator's CPU seconds from the first write until every
	// watcher saw the last one; CrowdCPU the watchers' process's (this
	// one's) over the same time, run at CrowdNice.
	CPU, CrowdCPU float64
	CrowdNice     int
	// LateP50, LateP99, LateMax: per write, the time from its answer
	// until the last watcher received it (negative: every watcher had it
	// before the writer had its answer).
	LateP50, LateP99, LateMax time.Duration
	// GCWrites is how many collections the coordinator ran during the
	// writes, GCPause their stop-the-world pauses in all.
	GCWrites int
	GCPause  time.Duration
	// FaultsWrites and SysWrites are the coordinator's minor page faults
	// and system (kernel) CPU seconds from the first write to the last
	// write's answer: memory it maps on first touch, or again after
	// handing it back, is paid for in the kernel while writes wait.
	FaultsWrites int64
	SysWrites    float64
	// RSS in KiB: before the watchers opened, the highest sample while
	// they watched, and After/2 and After after they closed.
	RSSStart, RSSWatching, RSSHalfAfter, RSSAfter int64
	// Missed counts (watcher, host) pairs a watcher never saw; Errors the
	// watch requests that failed (each retried by its watcher).
	Missed, Errors int
	// ErrorCauses counts the failed watch requests by their error's text
	// (addresses and ports left out).
	ErrorCauses map[string]int
	// Encoded and Sent are the watch answers the coordinator encoded and
	// sent (a streamed line counts as an answer) during the writes.
	Encoded, Sent int
	// MemStart, MemWatching, MemAfter say where the coordinator's memory
	// is when RSSStart is sampled, once every watcher saw every write, and
	// when RSSAfter is sampled.
	MemStart, MemWatching, MemAfter MemBreakdown
}

// Watchers runs one watchers measurement and stops the coordinator.
func Watchers(ctx context.Context, cfg WatchersConfig) (WatchersResult, error) {
	res := WatchersResult{Watchers: cfg.Watchers, Writes: cfg.Writes, Stream: cfg.Stream, CrowdNice: cfg.CrowdNice}
	if cfg.Writes < 1 || cfg.Watchers < 0 || cfg.Hosts < 0 {
		return res, fmt.Errorf("--writes %d / --watchers %d / --hosts %d: need writes ≥ 1, watchers and hosts ≥ 0", cfg.Writes, cfg.Watchers, cfg.Hosts)
	}
	if cfg.PerClient < 1 {
		cfg.PerClient = 100
	}
	if cfg.CrowdNice < 0 || cfg.CrowdNice > 19 {
		return res, fmt.Errorf("--crowd-nice %d: want 0 (off) to 19", cfg.CrowdNice)
	}
	if cfg.CrowdNice > 0 && (cfg.WriterBin == "" || os.Geteuid() != 0) {
		return res, fmt.Errorf("--crowd-nice %d: needs root and a writer process (the writer is started back at nice 0); run as root or without --crowd-nice", cfg.CrowdNice)
	}
	f := &fleet{cfg: FleetConfig{Bin: cfg.Bin, Dir: cfg.Dir, CoordArgs: cfg.CoordArgs, Progress: cfg.Progress}}
	defer f.stopAll()
	if err := f.startCoordinator(ctx); err != nil {
		return res, err
	}
	if cfg.CrowdNice > 0 {
		if err := niceSelf(cfg.CrowdNice); err != nil {
			return res, fmt.Errorf("--crowd-nice %d: %w", cfg.CrowdNice, err)
		}
	}
	const rack = watchedRack
	put := newHostPutter(f.coordURL, f.token)
	for i := 0; i < cfg.Hosts; i++ {
		if err := put(ctx, fmt.Sprintf("base-%05d", i)); err != nil {
			return res, fmt.Errorf("register base host %d: %w", i, err)
		}
	}
	first, err := f.admin.Watch(ctx, rack, 0, time.Second)
	if err != nil {
		return res, fmt.Errorf("first watch: %w", err)
	}
	pid := f.coord.pid()
	res.RSSStart = procstat.RSSKiB(pid)
	if res.MemStart, err = f.memBreakdown(); err != nil {
		return res, err
	}
	f.say("coordinator RSS %.0f MiB with %d hosts; opening %d watchers", float64(res.RSSStart)/1024, cfg.Hosts, cfg.Watchers)

	wctx, stopWatchers := context.WithCancel(ctx)
	defer stopWatchers()
	ws := make([]*watcher, cfg.Watchers)
	var started sync.WaitGroup
	var done sync.WaitGroup
	var clients []*client.Client
	for i := range ws {
		if i%cfg.PerClient == 0 {
			c, err := client.New(client.Config{Coordinator: f.coordURL, Token: f.token, Timeout: 30 * time.Second})
			if err != nil {
				return res, err
			}
			if cfg.DialFirst {
				if err := c.Health(ctx); err != nil {
					return res, fmt.Errorf("watchers' client %d: first request: %w", len(clients), err)
				}
			}
			clients = append(clients, c)
		}
		ws[i] = &watcher{c: clients[len(clients)-1], rack: rack, index: first.Index, seen: make([]int64, cfg.Writes), stream: cfg.Stream}
		started.Add(1)
		done.Add(1)
		go func(w *watcher) { defer done.Done(); w.run(wctx, &started) }(ws[i])
	}
	started.Wait()
	time.Sleep(2 * time.Second) // every first long poll parked at the coordinator
	var peak atomic.Int64
	peak.Store(procstat.RSSKiB(pid))
	stopSample := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stopSample:
				return
			case <-time.After(250 * time.Millisecond):
				if r := procstat.RSSKiB(pid); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	}()

	enc0, _ := f.metric("rackfence_watch_answers_encoded_total")
	sent0, _ := f.metric("rackfence_watch_answers_sent_total")
	gc0, _ := f.metric("go_gc_duration_seconds_count")
	pause0, _ := f.metric("go_gc_duration_seconds_sum")
	cpu0, crowd0 := procstat.CPUSeconds(pid), procstat.CPUSeconds(os.Getpid())
	faults0, sys0 := procstat.MinorFaults(pid), procstat.SystemTicks(pid)
	f.say("writing %d hosts", cfg.Writes)
	var lats []time.Duration
	var answered []time.Time
	if cfg.WriterBin != "" {
		lats, answered, err = f.writeInChild(ctx, cfg)
	} else {
		lats, answered, err = PutWatchedHosts(ctx, f.coordURL, f.token, cfg.Writes)
	}
	if err != nil {
		return res, err
	}
	res.FaultsWrites = procstat.MinorFaults(pid) - faults0
	res.SysWrites = float64(procstat.SystemTicks(pid)-sys0) / procstat.TicksPerSecond
	gc1, _ := f.metric("go_gc_duration_seconds_count")
	pause1, _ := f.metric("go_gc_duration_seconds_sum")
	res.GCWrites, res.GCPause = int(gc1-gc0), time.Duration((pause1-pause0)*float64(time.Second))
	f.say("%d writes done; waiting for every watcher to see them", cfg.Writes)
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) && missed(ws) > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	res.CPU = procstat.CPUSeconds(pid) - cpu0
	res.CrowdCPU = procstat.CPUSeconds(os.Getpid()) - crowd0
	res.LateP50, res.LateP99, res.LateMax = lateness(ws, answered)
	enc1, _ := f.metric("rackfence_watch_answers_encoded_total")
	sent1, _ := f.metric("rackfence_watch_answers_sent_total")
	res.Encoded, res.Sent = int(enc1-enc0), int(sent1-sent0)
	close(stopSample)
	<-sampled
	res.RSSWatching = peak.Load()
	res.Missed = missed(ws)
	if res.MemWatching, err = f.memBreakdown(); err != nil {
		return res, err
	}
	stopWatchers()
	done.Wait()
	res.ErrorCauses = map[string]int{}
	for _, w := range ws {
		res.Errors += w.errors
		for cause, n := range w.causes {
			res.ErrorCauses[cause] += n
		}
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
	res.P50, res.P99, res.Max = spread(lats)
	f.say("watchers closed; RSS in %s and %s", cfg.After/2, cfg.After)
	select {
	case <-time.After(cfg.After / 2):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	res.RSSHalfAfter = procstat.RSSKiB(pid)
	select {
	case <-time.After(cfg.After - cfg.After/2):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	res.RSSAfter = procstat.RSSKiB(pid)
	res.MemAfter, err = f.memBreakdown()
	return res, err
}

// watcher follows one rack from answer to answer, as an agent does, and
// records every host name it was answered.
type watcher struct {
	c      *client.Client
	rack   string
	index  uint64
	mu     sync.Mutex
	seen   []int64 // by write: when it was first received (Unix ns), 0 = not yet
	errors int
	causes map[string]int // errors by errorCause
	stream bool
}

// failed counts a watch request that failed, by its cause.
func (w *watcher) failed(err error) {
	w.errors++
	if w.causes == nil {
		w.causes = map[string]int{}
	}
	w.causes[errorCause(err)]++
}

// hostPort matches an address with its port in an error's text.
var hostPort = regexp.MustCompile(`(\[[0-9a-f:]+\]|[0-9]+(\.[0-9]+){3}):[0-9]+`)

// errorCause is err's text without addresses and ports, so the errors of
// every watcher with the same cause count together.
func errorCause(err error) string {
	return hostPort.ReplaceAllString(err.Error(), "ADDR")
}

func (w *watcher) run(ctx context.Context, started *sync.WaitGroup) {
	go func() { time.Sleep(50 * time.Millisecond); started.Done() }() // its first request sent
	if w.stream {
		err := w.c.FollowRack(ctx, w.rack, w.index, client.FollowOptions{}, func(resp *wire.WatchResponse) error {
			w.note(resp)
			return nil
		})
		if err != nil && ctx.Err() == nil {
			w.failed(err)
		}
		return
	}
	for ctx.Err() == nil {
		resp, err := w.c.Watch(ctx, w.rack, w.index, 30*time.Second)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return
			}
			w.failed(err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		w.note(resp)
		w.index = resp.Index
	}
}

// note records when it first received each written host an answer
// carries.
func (w *watcher) note(resp *wire.WatchResponse) {
	now := time.Now().UnixNano()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range resp.Hosts {
		i, ok := watchersWriteIndex(h.Name)
		if ok && i < len(w.seen) && w.seen[i] == 0 {
			w.seen[i] = now
		}
	}
}

// missed counts the (watcher, write) pairs not seen yet.
func missed(ws []*watcher) int {
	n := 0
	for _, w := range ws {
		w.mu.Lock()
		for _, at := range w.seen {
			if at == 0 {
				n++
			}
		}
		w.mu.Unlock()
	}
	return n
}

// lateness is, over the writes, the p50, p99 and max of the time from a
// write's answer until the last watcher received it (writes some watcher
// never received are left out: missed counts them).
func lateness(ws []*watcher, answered []time.Time) (p50, p99, most time.Duration) {
	var late []time.Duration
	for i, at := range answered {
		var last int64
		for _, w := range ws {
			w.mu.Lock()
			s := w.seen[i]
			w.mu.Unlock()
			if s == 0 {
				last = 0
				break
			}
			last = max(last, s)
		}
		if last != 0 {
			late = append(late, time.Duration(last-at.UnixNano()))
		}
	}
	return spread(late)
}

// WriteWatchersText prints one line for r.
func WriteWatchersText(r WatchersResult) string {
	mib := func(k int64) float64 { return float64(k) / 1024 }
	mode := "poll"
	if r.Stream {
		mode = "stream"
	}
	s := fmt.Sprintf("mode=%-6s watchers=%-5d writes=%d p50=%6.1fms p99=%6.1fms max=%6.1fms watchers-late p50=%.1fms p99=%.1fms max=%.1fms coordinator-cpu=%6.2fs gc-in-writes=%d (pauses %.1fms) faults-in-writes=%d sys-in-writes=%.2fs crowd-cpu=%.2fs crowd-nice=%d rss-start=%4.0fMiB rss-watching=%4.0fMiB rss-after-half=%4.0fMiB rss-after=%4.0fMiB answers-encoded=%d answers-sent=%d missed=%d watch-errors=%d\n  memory at start: %s\n  memory watching: %s\n  memory after:    %s",
		mode, r.Watchers, r.Writes, ms(r.P50), ms(r.P99), ms(r.Max), ms(r.LateP50), ms(r.LateP99), ms(r.LateMax), r.CPU, r.GCWrites, ms(r.GCPause), r.FaultsWrites, r.SysWrites, r.CrowdCPU, r.CrowdNice, mib(r.RSSStart), mib(r.RSSWatching), mib(r.RSSHalfAfter), mib(r.RSSAfter), r.Encoded, r.Sent, r.Missed, r.Errors,
		r.MemStart, r.MemWatching, r.MemAfter)
	causes := make([]string, 0, len(r.ErrorCauses))
	for c := range r.ErrorCauses {
		causes = append(causes, c)
	}
	sort.Slice(causes, func(i, j int) bool { return r.ErrorCauses[causes[i]] > r.ErrorCauses[causes[j]] })
	for i, c := range causes {
		if i == 5 {
			s += fmt.Sprintf("\n  watch errors: %d more causes", len(causes)-i)
			break
		}
		s += fmt.Sprintf("\n  watch errors: %d× %s", r.ErrorCauses[c], c)
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// watchedRack is the rack the watchers follow and the writes go to.
const watchedRack = "watched"

// WatchersWriteName is the name of the i-th host written while the
// watchers watch.
func WatchersWriteName(i int) string { return fmt.Sprintf("w-%05d", i) }

// watchersWriteIndex is i for WatchersWriteName(i).
func watchersWriteIndex(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "w-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil && i >= 0
}

// newHostPutter returns a function that registers one host in
// watchedRack. Writes go over their own HTTP/1.1 connection: no HTTP/2
// ping to time out while the machine is busy, nothing shared with the
// watchers.
func newHostPutter(url, token string) func(ctx context.Context, name string) error {
	wc := NewHTTPClientFor(1, token)
	wc.Timeout = time.Minute
	wc.Transport.(*http.Transport).DialContext = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
	return func(ctx context.Context, name string) error {
		h := &wire.Host{Name: name, Rack: watchedRack, Online: true, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9/redfish/v1/Systems/1", Credentials: "bmc"}}
		return call(ctx, wc, "PUT", url+"/v1/hosts/"+name, token, h, nil)
	}
}

// PutWatchedHosts makes the watchers run's writes, one at a time, and
// returns each one's latency (request to answer) and when its answer
// came.
func PutWatchedHosts(ctx context.Context, url, token string, writes int) ([]time.Duration, []time.Time, error) {
	put := newHostPutter(url, token)
	lats := make([]time.Duration, writes)
	answered := make([]time.Time, writes)
	for i := range lats {
		t0 := time.Now()
		if err := put(ctx, WatchersWriteName(i)); err != nil {
			return nil, nil, fmt.Errorf("write %d: %w", i, err)
		}
		answered[i] = time.Now()
		lats[i] = answered[i].Sub(t0)
	}
	return lats, answered, nil
}

// writeInChild runs PutWatchedHosts in cfg.WriterBin (rackfence-load
// put-hosts), which prints a line per write: its latency in microseconds
// and when its answer came (Unix microseconds). With CrowdNice the writer
// is started through nice(1) back at nice 0.
func (f *fleet) writeInChild(ctx context.Context, cfg WatchersConfig) ([]time.Duration, []time.Time, error) {
	tf := filepath.Join(cfg.Dir, "writer.token")
	if err := os.WriteFile(tf, []byte(f.token), 0o600); err != nil {
		return nil, nil, err
	}
	args := []string{cfg.WriterBin, "put-hosts", "--url", f.coordURL, "--token-file", tf, "--writes", strconv.Itoa(cfg.Writes)}
	if cfg.CrowdNice > 0 {
		args = append([]string{"nice", "-n", strconv.Itoa(-cfg.CrowdNice)}, args...)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("writer process %s: %w: %s", cfg.WriterBin, err, strings.TrimSpace(stderr.String()))
	}
	var lats []time.Duration
	var answered []time.Time
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var us, at int64
		if _, err := fmt.Sscan(l, &us, &at); err != nil {
			return nil, nil, fmt.Errorf("writer process: %q is not a latency and an answer time in microseconds", l)
		}
		lats = append(lats, time.Duration(us)*time.Microsecond)
		answered = append(answered, time.UnixMicro(at))
	}
	if len(lats) != cfg.Writes {
		return nil, nil, fmt.Errorf("writer process printed %d latencies, want %d", len(lats), cfg.Writes)
	}
	return lats, answered, nil
}
