package bench

import (
	"context"
	"fmt"
	"github.com/rackfence/rackfence/testkit/procstat"
	"sort"
	"strings"
	"sync"
	"time"
)

// FleetSample is one sample taken while the fleet registers: hosts
// available, the coordinator's RSS and Go heap in use, At after the start
// of registration. A figure the scrape could not read is -1.
type FleetSample struct {
	At time.Duration
	// Available counts hosts in state available, Registered every host
	// the coordinator holds (in any state).
	Available, Registered int
	RSSKiB                int64
	HeapBytes             float64
}

// sampler samples the fleet every cfg.SampleEvery until stopped.
type sampler struct {
	mu      sync.Mutex
	samples []FleetSample
	// states is the host count per provisioning state at the last
	// successful scrape: what the hosts not yet available are doing.
	states map[string]int
	quit   chan struct{}
	done   chan struct{}
}

func (f *fleet) startSampler(start time.Time) *sampler {
	s := &sampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var said time.Duration
		for {
			x, states := f.sample(start)
			s.add(x, states)
			if x.At-said >= 5*time.Second && x.Available >= 0 {
				f.say("  %.0f s: %d available (%s)", x.At.Seconds(), x.Available, stateText(states))
				said = x.At
			}
			select {
			case <-s.quit:
				return
			case <-time.After(f.cfg.SampleEvery):
			}
		}
	}()
	return s
}

// sample reads the coordinator's RSS from /proc, and the hosts per state
// and the heap from one scrape of its /metrics (states nil when the scrape
// failed).
func (f *fleet) sample(start time.Time) (FleetSample, map[string]int) {
	smp := FleetSample{Available: -1, Registered: -1, RSSKiB: procstat.RSSKiB(f.coord.pid()), HeapBytes: -1}
	states := map[string]int{}
	err := f.metrics(func(name, labels string, v float64) {
		switch name {
		case "rackfence_hosts":
			if st, ok := labelValue(labels, "state"); ok {
				states[st] += int(v)
			}
		case "go_memstats_heap_inuse_bytes":
			smp.HeapBytes = v
		}
	})
	smp.At = time.Since(start)
	if err != nil {
		return smp, nil
	}
	states = withoutPrefill(states, f.prefilled)
	smp.Available = states["available"] // no sample: no host is available yet
	smp.Registered = 0
	for _, n := range states {
		smp.Registered += n
	}
	return smp, states
}

func (s *sampler) add(x FleetSample, states map[string]int) {
	s.mu.Lock()
	s.samples = append(s.samples, x)
	if states != nil {
		s.states = states
	}
	s.mu.Unlock()
}

// lastStates is the host count per state at the last successful scrape.
func (s *sampler) lastStates() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.states
}

// stateText is "N state" for every state but available, most hosts first.
func stateText(states map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range states {
		if k != "available" && v > 0 {
			l = append(l, kv{k, v})
		}
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || l[i].v == l[j].v && l[i].k < l[j].k })
	var parts []string
	for _, x := range l {
		parts = append(parts, fmt.Sprintf("%d %s", x.v, x.k))
	}
	if len(parts) == 0 {
		return "no other state"
	}
	return strings.Join(parts, ", ")
}

// latest is the last sample whose available count was read (ok false
// when none was yet).
func (s *sampler) latest() (FleetSample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.samples) - 1; i >= 0; i-- {
		if s.samples[i].Available >= 0 {
			return s.samples[i], true
		}
	}
	return FleetSample{}, false
}

// stop ends the sampling and returns every sample.
func (s *sampler) stop() []FleetSample {
	close(s.quit)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FleetSample(nil), s.samples...)
}

// waitAvailable waits until the sampler saw every host available. The
// deadline grows with the fleet: 30 minutes plus 10 ms per host.
func (f *fleet) waitAvailable(ctx context.Context, s *sampler) error {
	limit := 30*time.Minute + time.Duration(f.cfg.Hosts)*10*time.Millisecond
	err := f.until(ctx, limit, "every host available", func() error {
		x, ok := s.latest()
		if !ok {
			return errRetry
		}
		if x.Available >= f.cfg.Hosts {
			return nil
		}
		return errRetry
	})
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w; hosts not available: %s (the agents' logs are in the work directory)", err, stateText(s.lastStates()))
	}
	return err
}

// peaks are the highest RSS (KiB) and Go heap (bytes) among samples.
func peaks(samples []FleetSample) (rssKiB int64, heap float64) {
	for _, x := range samples {
		rssKiB = max(rssKiB, x.RSSKiB)
		heap = max(heap, x.HeapBytes)
	}
	return rssKiB, heap
}
