package bench_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/procstat"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// BenchmarkSteadyLeases measures the coordinator's CPU for the part of a
// steady fleet that does not depend on its hosts: 100 racks, each with a
// lease renewed every 10 s / 3 (the agent's default) and a rack watch
// long-polling 30 s at a time, as 100 idle agents do. It reports the
// coordinator's CPU per second and the watch answers per second (an
// answer that carries nothing is a wakeup wasted). With
// RACKFENCE_STEADY_PROFILE=FILE it writes the coordinator's CPU profile of
// the measured window.
//
//	make build && RACKFENCE_BIN=$PWD/bin go test -run '^$' -bench SteadyLeases -benchtime 1x ./testkit/bench/
func BenchmarkSteadyLeases(b *testing.B) {
	const racks, ttl, window = 100, 10 * time.Second, 30 * time.Second
	for i := 0; i < b.N; i++ {
		var opts rig.CoordOpts
		paddr := ""
		if os.Getenv("RACKFENCE_STEADY_PROFILE") != "" {
			paddr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(b, "127.0.0.1"))
			opts.Args = []string{"--pprof-addr", paddr}
		}
		c := rig.StartCoordinator(b, b.TempDir(), opts)
		ctx, cancel := context.WithCancel(context.Background())
		var answers atomic.Int64
		var wg sync.WaitGroup
		for r := 0; r < racks; r++ {
			rack := fmt.Sprintf("r%03d", r)
			l, err := c.Admin.AcquireLease(ctx, rack, wire.LeaseRequest{Holder: "agent-" + rack, TTL: wire.Duration(ttl)})
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(2)
			go func() { // the agent's watch
				defer wg.Done()
				var index uint64
				for ctx.Err() == nil {
					resp, err := c.Admin.Watch(ctx, rack, index, 30*time.Second)
					if err != nil {
						continue
					}
					answers.Add(1)
					index = resp.Index
				}
			}()
			go func() { // the agent's lease keeper, spread over the period
				defer wg.Done()
				every := ttl / 3
				t := time.NewTimer(every * time.Duration(r) / racks)
				defer t.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-t.C:
					}
					if _, err := c.Admin.RenewLease(ctx, rack, wire.LeaseRequest{Holder: l.Holder, Epoch: l.Epoch, TTL: wire.Duration(ttl)}); err != nil && ctx.Err() == nil {
						b.Errorf("renew %s: %v", rack, err)
					}
					t.Reset(every)
				}
			}()
		}
		time.Sleep(5 * time.Second) // first answers and renewals settle
		pid := c.Proc.Cmd.Process.Pid
		c0, a0, t0 := procstat.CPUSeconds(pid), answers.Load(), time.Now()
		if paddr != "" {
			saveProfile(b, paddr, window, os.Getenv("RACKFENCE_STEADY_PROFILE"))
		} else {
			time.Sleep(window)
		}
		el := time.Since(t0).Seconds()
		cpu, ans := (procstat.CPUSeconds(pid)-c0)/el*1000, float64(answers.Load()-a0)/el
		cancel()
		wg.Wait()
		b.ReportMetric(cpu, "coord-ms-CPU/s")
		b.ReportMetric(ans, "watch-answers/s")
		fmt.Printf("%d racks, renewals every %s, watches of 30 s: coordinator %.1f ms CPU/s, %.1f watch answers/s\n", racks, ttl/3, cpu, ans)
	}
}

// saveProfile writes the CPU profile over d of the process serving pprof
// at addr.
func saveProfile(tb testing.TB, addr string, d time.Duration, out string) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	f, err := os.Create(out)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		tb.Fatal(err)
	}
}
