package bmc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/testenv"
)

// BenchmarkAgentCalls64Hosts measures the BMC calls per second one agent
// process (this one: a Pool of bmclib sessions, every mutation through the
// Guard) sustains against one rackfence-bmcsim process holding 1,000 BMCs,
// with 64 hosts driven concurrently. Each op is one adapter call; calls
// alternate between a power read and a guarded power change. Figures:
//
//	go test -run '^$' -bench AgentCalls64Hosts -benchtime 2000x ./agent/bmc/
func BenchmarkAgentCalls64Hosts(b *testing.B) {
	for _, lat := range []time.Duration{0, 200 * time.Millisecond} {
		b.Run("latency="+lat.String(), func(b *testing.B) { benchCalls(b, lat) })
	}
}

func benchCalls(b *testing.B, latency time.Duration) {
	const hosts, workers = 1000, 64
	bin := testenv.Binary(b, "rackfence-bmcsim")
	p := testenv.Start(b, "bmcsim", bin, nil, "--hosts", strconv.Itoa(hosts), "--base-port", "0", "--latency", latency.String())
	var base int
	testenv.Eventually(b, 60*time.Second, "bmcsim listening", func() error {
		_, rest, ok := strings.Cut(p.Output(), "listening on 127.0.0.1:")
		if !ok {
			return fmt.Errorf("output: %q", p.Output())
		}
		first, _, _ := strings.Cut(rest, "-")
		var err error
		base, err = strconv.Atoi(first)
		return err
	})
	ctx := context.Background()
	g, _ := leasedGuard(24*time.Hour, nil)
	pool := NewPool(Options{Timeout: 30 * time.Second})
	defer pool.Close(ctx)
	conns := make([]*Conn, workers)
	for i := range conns {
		c, err := pool.Get(ctx, fmt.Sprintf("h%d", i), Target{
			Address:  fmt.Sprintf("redfish+http://127.0.0.1:%d/redfish/v1/Systems/1", base+i*(hosts/workers)),
			Username: "admin", Password: "password"})
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
	}
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c, host, on := conns[w], fmt.Sprintf("h%d", w), false
			for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
				var err error
				if n%2 == 0 {
					_, err = c.PowerState(ctx)
				} else {
					on = !on
					err = c.SetPower(ctx, g, host, on)
				}
				if err != nil {
					failed.Add(1)
				}
			}
		}(w)
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d calls failed", f, b.N)
	}
	cps := float64(b.N) / el.Seconds()
	b.ReportMetric(cps, "calls/s")
	rss := procRSSMiB(p.Cmd.Process.Pid)
	b.ReportMetric(rss, "sim-RSS-MiB")
	fmt.Printf("FIGURE agent_calls_per_second latency=%s hosts_concurrent=%d sim_bmcs=%d calls=%d elapsed=%s calls/s=%.0f sim_rss_mib=%.1f\n",
		latency, workers, hosts, b.N, el.Round(time.Millisecond), cps, rss)
}

func procRSSMiB(pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	return -1
}
