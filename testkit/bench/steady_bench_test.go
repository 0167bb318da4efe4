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

// BenchmarkSteady measures the coordinator's CPU in a steady fleet of 100
// racks, as 100 idle agents load it: each rack's lease renewed every
// 10 s / 3 (the agent's default) and a rack watch long-polling 30 s at a
// time; with hosts (100 per rack, available), one status report of
// touches per rack every quarter of the status refresh, each touching the
// hosts due (a quarter of the rack), as the agent's reporter does. It
// reports the coordinator's CPU per second and the watch answers per
// second (an answer that carries nothing is a wakeup wasted). With
// RACKFENCE_STEADY_PROFILE=FILE it writes the coordinator's CPU profile
// of the measured window (of the last sub-benchmark run).
//
//	make build && RACKFENCE_BIN=$PWD/bin go test -run '^$' -bench Steady -benchtime 1x ./testkit/bench/
func BenchmarkSteady(b *testing.B) {
	for _, c := range []struct {
		name    string
		hosts   int // per rack
		refresh time.Duration
	}{{"leases", 0, 0}, {"touches/refresh=60s", 100, time.Minute}, {"touches/refresh=5m", 100, 5 * time.Minute}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cpu, ans := steady(b, 100, c.hosts, c.refresh)
				b.ReportMetric(cpu, "coord-ms-CPU/s")
				b.ReportMetric(ans, "watch-answers/s")
				fmt.Printf("%s: 100 racks, %d hosts each, renewals every %s, watches of 30 s: coordinator %.1f ms CPU/s, %.1f watch answers/s\n",
					c.name, c.hosts, fenceTTL/3, cpu, ans)
			}
		})
	}
}

const fenceTTL = 10 * time.Second

// steady runs one measurement: the coordinator's CPU (ms a second) and the
// watch answers a second over 30 s.
func steady(b *testing.B, racks, hosts int, refresh time.Duration) (cpu, answers float64) {
	const window = 30 * time.Second
	var opts rig.CoordOpts
	paddr := ""
	if os.Getenv("RACKFENCE_STEADY_PROFILE") != "" {
		paddr = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(b, "127.0.0.1"))
		opts.Args = []string{"--pprof-addr", paddr}
	}
	c := rig.StartCoordinator(b, b.TempDir(), opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	for r := 0; r < racks; r++ {
		rack := fmt.Sprintf("r%03d", r)
		l, err := c.Admin.AcquireLease(ctx, rack, wire.LeaseRequest{Holder: "agent-" + rack, TTL: wire.Duration(fenceTTL)})
		if err != nil {
			b.Fatal(err)
		}
		bases := addHosts(b, c, rack, l.Epoch, hosts)
		wg.Add(3)
		go func() { // the agent's watch
			defer wg.Done()
			var index uint64
			for ctx.Err() == nil {
				resp, err := c.Admin.Watch(ctx, rack, index, 30*time.Second)
				if err != nil {
					continue
				}
				n.Add(1)
				index = resp.Index
			}
		}()
		// The agent's lease keeper and reporter, spread over their periods.
		go every(ctx, &wg, fenceTTL/3, r, racks, func() {
			if _, err := c.Admin.RenewLease(ctx, rack, wire.LeaseRequest{Holder: l.Holder, Epoch: l.Epoch, TTL: wire.Duration(fenceTTL)}); err != nil && ctx.Err() == nil {
				b.Errorf("renew %s: %v", rack, err)
			}
		})
		next := 0
		go every(ctx, &wg, refresh/4, r, racks, func() {
			if len(bases) == 0 {
				return
			}
			rep := wire.RackStatusReport{Epoch: l.Epoch}
			for k := 0; k < len(bases)/4; k++ {
				rep.Hosts = append(rep.Hosts, bases[next])
				next = (next + 1) % len(bases)
			}
			if _, err := c.Admin.ReportRackStatus(ctx, rack, rep); err != nil && ctx.Err() == nil {
				b.Errorf("touch %s: %v", rack, err)
			}
		})
	}
	time.Sleep(5 * time.Second) // first answers and renewals settle
	pid := c.Proc.Cmd.Process.Pid
	c0, n0, t0 := procstat.CPUSeconds(pid), n.Load(), time.Now()
	if paddr != "" {
		saveProfile(b, paddr, window, os.Getenv("RACKFENCE_STEADY_PROFILE"))
	} else {
		time.Sleep(window)
	}
	el := time.Since(t0).Seconds()
	cpu, answers = (procstat.CPUSeconds(pid)-c0)/el*1000, float64(n.Load()-n0)/el
	cancel()
	wg.Wait()
	return cpu, answers
}

// addHosts creates n available hosts in rack, with their statuses written
// under epoch, and returns a touch of each (its base modifiedIndex).
func addHosts(b *testing.B, c *rig.Coordinator, rack string, epoch uint64, n int) []wire.RackHostReport {
	if n == 0 {
		return nil
	}
	rep := wire.RackStatusReport{Epoch: epoch}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-h%03d", rack, i)
		h := &wire.Host{Name: name, Rack: rack, Online: true,
			BMC: wire.BMC{Address: fmt.Sprintf("redfish+http://127.0.0.1:9/redfish/v1/Systems/%s", name), Credentials: "bmc"}}
		if _, _, err := c.Admin.ApplyHost(context.Background(), h); err != nil {
			b.Fatal(err)
		}
		rep.Hosts = append(rep.Hosts, wire.RackHostReport{Name: name,
			Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: true}})
	}
	res, err := c.Admin.ReportRackStatus(context.Background(), rack, rep)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]wire.RackHostReport, n)
	for i, r := range res.Hosts {
		if r.Error != nil {
			b.Fatalf("status of %s: %s", r.Name, r.Error.Message)
		}
		out[i] = wire.RackHostReport{Name: r.Name, Touch: r.ModifiedIndex}
	}
	return out
}

// every calls fn every d until ctx ends, the first time after the i-th of
// n slices of d.
func every(ctx context.Context, wg *sync.WaitGroup, d time.Duration, i, n int, fn func()) {
	defer wg.Done()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d * time.Duration(i) / time.Duration(n))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fn()
		t.Reset(d)
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
