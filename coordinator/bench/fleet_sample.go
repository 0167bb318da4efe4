package bench

import (
	"context"
	"sync"
	"time"
)

// FleetSample is one sample taken while the fleet registers: hosts
// available, the coordinator's RSS and Go heap in use, At after the start
// of registration. A figure the scrape could not read is -1.
type FleetSample struct {
	At        time.Duration
	Available int
	RSSKiB    int64
	HeapBytes float64
}

// sampler samples the fleet every cfg.SampleEvery until stopped.
type sampler struct {
	mu      sync.Mutex
	samples []FleetSample
	quit    chan struct{}
	done    chan struct{}
}

func (f *fleet) startSampler(start time.Time) *sampler {
	s := &sampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var said time.Duration
		for {
			x := f.sample(start)
			s.add(x)
			if x.At-said >= 5*time.Second && x.Available >= 0 {
				f.say("  %.0f s: %d available", x.At.Seconds(), x.Available)
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

// sample reads the coordinator's RSS from /proc and the available count
// and heap from one scrape of its /metrics.
func (f *fleet) sample(start time.Time) FleetSample {
	smp := FleetSample{Available: -1, RSSKiB: rssKiB(f.coord.pid()), HeapBytes: -1}
	avail := 0
	err := f.metrics(func(name, labels string, v float64) {
		switch {
		case name == "rackfence_hosts" && labelIs(labels, "state", "available"):
			avail += int(v)
		case name == "go_memstats_heap_inuse_bytes":
			smp.HeapBytes = v
		}
	})
	if err == nil { // no sample: no host is available yet
		smp.Available = avail
	}
	smp.At = time.Since(start)
	return smp
}

func (s *sampler) add(x FleetSample) {
	s.mu.Lock()
	s.samples = append(s.samples, x)
	s.mu.Unlock()
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
	return f.until(ctx, limit, "every host available", func() error {
		x, ok := s.latest()
		if !ok {
			return errRetry
		}
		if x.Available >= f.cfg.Hosts {
			return nil
		}
		return errRetry
	})
}

// peaks are the highest RSS (KiB) and Go heap (bytes) among samples.
func peaks(samples []FleetSample) (rssKiB int64, heap float64) {
	for _, x := range samples {
		rssKiB = max(rssKiB, x.RSSKiB)
		heap = max(heap, x.HeapBytes)
	}
	return rssKiB, heap
}
