package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
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
	// CoordArgs are added to the coordinator (e.g. --pprof-addr).
	CoordArgs []string
	// Progress receives one line per phase; nil = none.
	Progress func(string)
}

// WatchersResult is what one watchers run measured.
type WatchersResult struct {
	Watchers, Writes int
	// P50, P99, Max are the writes' latencies (request to answer).
	P50, P99, Max time.Duration
	// CPU is the coordinator's CPU seconds from the first write until every
	// watcher saw the last one.
	CPU float64
	// RSS in KiB: before the watchers opened, the highest sample while
	// they watched, and After/2 and After after they closed.
	RSSStart, RSSWatching, RSSHalfAfter, RSSAfter int64
	// Missed counts (watcher, host) pairs a watcher never saw; Errors the
	// watch requests that failed.
	Missed, Errors int
}

// Watchers runs one watchers measurement and stops the coordinator.
func Watchers(ctx context.Context, cfg WatchersConfig) (WatchersResult, error) {
	res := WatchersResult{Watchers: cfg.Watchers, Writes: cfg.Writes}
	if cfg.Writes < 1 || cfg.Watchers < 0 || cfg.Hosts < 0 {
		return res, fmt.Errorf("--writes %d / --watchers %d / --hosts %d: need writes ≥ 1, watchers and hosts ≥ 0", cfg.Writes, cfg.Watchers, cfg.Hosts)
	}
	if cfg.PerClient < 1 {
		cfg.PerClient = 100
	}
	f := &fleet{cfg: FleetConfig{Bin: cfg.Bin, Dir: cfg.Dir, CoordArgs: cfg.CoordArgs, Progress: cfg.Progress}}
	defer f.stopAll()
	if err := f.startCoordinator(ctx); err != nil {
		return res, err
	}
	const rack = "watched"
	// Writes go over their own HTTP/1.1 connection: no HTTP/2 ping to time
	// out while the machine is busy, nothing shared with the watchers.
	wc := NewHTTPClientFor(1, f.token)
	wc.Timeout = time.Minute
	wc.Transport.(*http.Transport).DialContext = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
	put := func(name string) error {
		h := &wire.Host{Name: name, Rack: rack, Online: true, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9/redfish/v1/Systems/1", Credentials: "bmc"}}
		return call(ctx, wc, "PUT", f.coordURL+"/v1/hosts/"+name, f.token, h, nil)
	}
	for i := 0; i < cfg.Hosts; i++ {
		if err := put(fmt.Sprintf("base-%05d", i)); err != nil {
			return res, fmt.Errorf("register base host %d: %w", i, err)
		}
	}
	first, err := f.admin.Watch(ctx, rack, 0, time.Second)
	if err != nil {
		return res, fmt.Errorf("first watch: %w", err)
	}
	pid := f.coord.pid()
	res.RSSStart = procstat.RSSKiB(pid)
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
			clients = append(clients, c)
		}
		ws[i] = &watcher{c: clients[len(clients)-1], rack: rack, index: first.Index, seen: map[string]bool{}}
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

	cpu0 := procstat.CPUSeconds(pid)
	lats := make([]time.Duration, cfg.Writes)
	names := make([]string, cfg.Writes)
	for i := range lats {
		names[i] = fmt.Sprintf("w-%05d", i)
		t0 := time.Now()
		if err := put(names[i]); err != nil {
			return res, fmt.Errorf("write %d: %w", i, err)
		}
		lats[i] = time.Since(t0)
	}
	f.say("%d writes done; waiting for every watcher to see them", cfg.Writes)
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) && missed(ws, names) > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	res.CPU = procstat.CPUSeconds(pid) - cpu0
	close(stopSample)
	<-sampled
	res.RSSWatching = peak.Load()
	res.Missed = missed(ws, names)
	stopWatchers()
	done.Wait()
	for _, w := range ws {
		res.Errors += w.errors
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	res.P50, res.P99, res.Max = lats[len(lats)/2], lats[len(lats)*99/100], lats[len(lats)-1]
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
	return res, nil
}

// watcher follows one rack from answer to answer, as an agent does, and
// records every host name it was answered.
type watcher struct {
	c      *client.Client
	rack   string
	index  uint64
	mu     sync.Mutex
	seen   map[string]bool
	errors int
}

func (w *watcher) run(ctx context.Context, started *sync.WaitGroup) {
	go func() { time.Sleep(50 * time.Millisecond); started.Done() }() // its first request sent
	for ctx.Err() == nil {
		resp, err := w.c.Watch(ctx, w.rack, w.index, 30*time.Second)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return
			}
			w.errors++
			time.Sleep(100 * time.Millisecond)
			continue
		}
		w.mu.Lock()
		for _, h := range resp.Hosts {
			if strings.HasPrefix(h.Name, "w-") {
				w.seen[h.Name] = true
			}
		}
		w.mu.Unlock()
		w.index = resp.Index
	}
}

// missed counts the (watcher, name) pairs not seen yet.
func missed(ws []*watcher, names []string) int {
	n := 0
	for _, w := range ws {
		w.mu.Lock()
		for _, name := range names {
			if !w.seen[name] {
				n++
			}
		}
		w.mu.Unlock()
	}
	return n
}

// WriteWatchersText prints one line for r.
func WriteWatchersText(r WatchersResult) string {
	mib := func(k int64) float64 { return float64(k) / 1024 }
	return fmt.Sprintf("watchers=%-5d writes=%d p50=%6.1fms p99=%6.1fms max=%6.1fms coordinator-cpu=%6.2fs rss-start=%4.0fMiB rss-watching=%4.0fMiB rss-after-half=%4.0fMiB rss-after=%4.0fMiB missed=%d watch-errors=%d",
		r.Watchers, r.Writes, ms(r.P50), ms(r.P99), ms(r.Max), r.CPU, mib(r.RSSStart), mib(r.RSSWatching), mib(r.RSSHalfAfter), mib(r.RSSAfter), r.Missed, r.Errors)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
