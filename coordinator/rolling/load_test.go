package rolling

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// loadHosts is how many hosts the writer cycles through (rack "load", no
// agent: only the writer changes them).
const loadHosts = 20

// writers is how many goroutines write at once; each owns the hosts i
// with i % writers == its number, so one host's writes stay in order.
const writers = 4

// writer keeps writing host specs (a new consumer each time) through any
// member and remembers, per host, what it may find there: the last
// acknowledged value, plus every value whose outcome it does not know
// (an error: it may or may not have been applied).
type writer struct {
	c *client.Client

	mu      sync.Mutex
	allowed map[string]map[string]bool
	acked   atomic.Int64
	unknown atomic.Int64
	paused  bool
	cond    *sync.Cond
	busy    int
	stop    chan struct{}
	done    sync.WaitGroup
}

func startWriter(c *client.Client) *writer {
	w := &writer{c: c, allowed: map[string]map[string]bool{}, stop: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	for g := 0; g < writers; g++ {
		w.done.Add(1)
		go w.run(g)
	}
	return w
}

func loadHost(i int) string { return fmt.Sprintf("load-%02d", i) }

func (w *writer) run(g int) {
	defer w.done.Done()
	for seq := g; ; seq += writers {
		w.mu.Lock()
		for w.paused {
			w.cond.Wait()
		}
		w.busy++
		w.mu.Unlock()
		select {
		case <-w.stop:
			w.idle()
			return
		default:
		}
		name, val := loadHost(seq%loadHosts), fmt.Sprintf("w%07d", seq)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, _, err := w.c.ApplyHost(ctx, &wire.Host{Name: name, Rack: "load", Consumer: val,
			BMC: wire.BMC{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", Credentials: "bmc"}})
		cancel()
		w.mu.Lock()
		if err == nil {
			w.allowed[name] = map[string]bool{val: true}
			w.acked.Add(1)
		} else {
			if w.allowed[name] == nil {
				w.allowed[name] = map[string]bool{"": true}
			}
			w.allowed[name][val] = true
			w.unknown.Add(1)
			time.Sleep(100 * time.Millisecond)
		}
		w.mu.Unlock()
		w.idle()
	}
}

func (w *writer) idle() {
	w.mu.Lock()
	w.busy--
	w.cond.Broadcast()
	w.mu.Unlock()
}

// pause waits until no write is in flight and holds the writer.
func (w *writer) pause() {
	w.mu.Lock()
	w.paused = true
	for w.busy > 0 {
		w.cond.Wait()
	}
	w.mu.Unlock()
}

func (w *writer) resume() {
	w.mu.Lock()
	w.paused = false
	w.cond.Broadcast()
	w.mu.Unlock()
}

func (w *writer) close() {
	close(w.stop)
	w.resume()
	w.done.Wait()
}

// lost lists the hosts whose value in hosts is not one the writer may
// find (an acknowledged write was lost, or a value appeared from nowhere).
func (w *writer) lost(hosts []wire.Host) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	got := map[string]string{}
	for _, h := range hosts {
		if h.Rack == "load" {
			got[h.Name] = h.Consumer
		}
	}
	var out []string
	for name, ok := range w.allowed {
		if !ok[got[name]] {
			out = append(out, fmt.Sprintf("%s=%q (allowed %v)", name, got[name], keys(ok)))
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
