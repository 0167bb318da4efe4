package ironic_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/rig"
)

// The agent is not there yet: these benchmarks drive the provisioner the
// way it will — one method at a time per host, hosts on a pool of N
// goroutines, transient errors retried after a short pause — against a
// real Ironic of their own (fresh database) and rackfence-bmcsim BMCs.
//
//	go test -run '^$' -bench 'RegisterAdopt' -benchtime 1x ./agent/provisioner/ironic/

// registerAdopt is the externally-provisioned path of one host: register
// (create, port, manage: Ironic verifies the BMC), then adopt to active.
func registerAdopt(ctx context.Context, p *ironic.Provisioner, h provisioner.Host, retries *atomic.Int64) error {
	call := func(f func() (provisioner.Result, error)) (provisioner.Result, error) {
		for {
			r, err := f()
			if errors.Is(err, errclass.ErrTransient) || (err == nil && r.InProgress) {
				retries.Add(1)
				select {
				case <-ctx.Done():
					return r, ctx.Err()
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			return r, err
		}
	}
	r, err := call(func() (provisioner.Result, error) { return p.Register(ctx, h) })
	if err != nil {
		return fmt.Errorf("register %s: %w", h.Name, err)
	}
	h.ProvisioningID = r.ProvisioningID
	if _, err := call(func() (provisioner.Result, error) { return p.Adopt(ctx, h) }); err != nil {
		return fmt.Errorf("adopt %s: %w", h.Name, err)
	}
	return nil
}

// pool runs fn for every host on n workers and returns the wall time.
func pool(hosts []provisioner.Host, n int, fn func(provisioner.Host) error) (time.Duration, error) {
	start := time.Now()
	work := make(chan provisioner.Host)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range work {
				if err := fn(h); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, h := range hosts {
		work <- h
	}
	close(work)
	wg.Wait()
	return time.Since(start), first
}

func benchRegisterAdopt(b *testing.B, driver string, hosts, workers int) {
	needIronic(b)
	url := rig.StartIronic(b).URL
	p := newProv(b, url, func(c *ironic.Config) {
		c.Driver = driver
		c.Logger = quietLogger()
		c.WaitTimeout = 5 * time.Minute
		c.PollInterval = 250 * time.Millisecond
	})
	if driver == "" {
		driver = "redfish"
	}
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: hosts, PowerOn: true})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var retries atomic.Int64
	b.ResetTimer()
	var wall time.Duration
	for iter := 0; iter < b.N; iter++ {
		hs := make([]provisioner.Host, hosts)
		for i := range hs {
			hs[i] = simHost(sim, i, uniqName("bench"))
		}
		d, err := pool(hs, workers, func(h provisioner.Host) error { return registerAdopt(ctx, p, h, &retries) })
		if err != nil {
			b.Fatal(err)
		}
		wall += d
		b.StopTimer()
		if _, err := pool(hs, workers, func(h provisioner.Host) error { _, err := p.Delete(ctx, h); return err }); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	per := wall.Seconds() / float64(b.N)
	b.ReportMetric(per, "s-wall/run")
	b.ReportMetric(per/float64(hosts), "s/host")
	b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/run")
	b.Logf("%s driver, poll ≤250ms: %d hosts, %d workers: register+adopt wall %.1fs per run (%.3fs/host), %d transient retries",
		driver, hosts, workers, per, per/float64(hosts), retries.Load())
}

// One host at a time: seconds per host for register + adopt.
func BenchmarkRegisterAdoptRedfish1Host(b *testing.B) { benchRegisterAdopt(b, "", 1, 1) }

// 100 hosts on a pool of workers, redfish driver against bmcsim.
func BenchmarkRegisterAdoptRedfish100Hosts1Worker(b *testing.B)  { benchRegisterAdopt(b, "", 100, 1) }
func BenchmarkRegisterAdoptRedfish100Hosts4Workers(b *testing.B) { benchRegisterAdopt(b, "", 100, 4) }
func BenchmarkRegisterAdoptRedfish100Hosts8Workers(b *testing.B) { benchRegisterAdopt(b, "", 100, 8) }
func BenchmarkRegisterAdoptRedfish100Hosts32Workers(b *testing.B) {
	benchRegisterAdopt(b, "", 100, 32)
}

// The same with fake-hardware (Ironic talks to no BMC): Ironic's own cost.
func BenchmarkRegisterAdoptFake100Hosts32Workers(b *testing.B) {
	benchRegisterAdopt(b, "fake-hardware", 100, 32)
}
