package bmc

import (
	"context"
	"fmt"
	"github.com/rackfence/rackfence/testkit/procstat"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func bmcsimConfig(latency time.Duration) bmcsim.Config {
	return bmcsim.Config{Hosts: 1, Latency: latency}
}

// BenchmarkAgentCalls64Hosts measures the BMC calls per second one agent
// process (this one: a Pool of Redfish sessions, every mutation through the
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
	rss := procstat.RSSMiB(p.Cmd.Process.Pid)
	b.ReportMetric(rss, "sim-RSS-MiB")
	fmt.Printf("FIGURE agent_calls_per_second latency=%s hosts_concurrent=%d sim_bmcs=%d calls=%d elapsed=%s calls/s=%.0f sim_rss_mib=%.1f\n",
		latency, workers, hosts, b.N, el.Round(time.Millisecond), cps, rss)
}

// BenchmarkOpsLatency200ms: wall time and HTTP requests of each adapter
// operation against one BMC answering every request in 200ms — what a
// reconcile costs per host. Figures:
//
//	go test -run '^$' -bench OpsLatency200ms -benchtime 3x ./agent/bmc/
func BenchmarkOpsLatency200ms(b *testing.B) {
	sim := startSim(b, bmcsimConfig(200*time.Millisecond))
	ctx := context.Background()
	g, _ := leasedGuard(24*time.Hour, nil)
	var c *Conn
	ops := []struct {
		name string
		fn   func() error
	}{
		{"login", func() error {
			var err error
			c, err = Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{MutationTimeout: 20 * time.Second})
			return err
		}},
		{"power-get", func() error { _, err := c.PowerState(ctx); return err }},
		{"power-on", func() error { return c.SetPower(ctx, g, "h0", true) }},
		{"power-off", func() error { return c.SetPower(ctx, g, "h0", false) }},
		{"boot-pxe", func() error { return c.SetBootDevice(ctx, g, "h0", "pxe", false) }},
		{"media-insert", func() error { return c.InsertMedia(ctx, g, "h0", "http://i/x.iso") }},
		{"media-eject", func() error { return c.EjectMedia(ctx, g, "h0") }},
		{"inventory", func() error { _, err := c.Inventory(ctx); return err }},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			reqs := 0
			for i := 0; i < b.N; i++ {
				if err := op.fn(); err != nil {
					b.Fatal(err)
				}
				c.mu.Lock()
				if c.tr != nil {
					c.tr.mu.Lock()
					reqs += c.tr.seen.requests
					c.tr.mu.Unlock()
				}
				c.mu.Unlock()
			}
			b.ReportMetric(float64(reqs)/float64(b.N), "http-requests/op")
			fmt.Printf("FIGURE op=%s latency=200ms time/op=%s http_requests/op=%.0f\n", op.name,
				(b.Elapsed() / time.Duration(b.N)).Round(time.Millisecond), float64(reqs)/float64(b.N))
		})
	}
}
