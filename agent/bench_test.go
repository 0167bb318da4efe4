package agent_test

import (
	"context"
	"fmt"
	"github.com/rackfence/rackfence/testkit/procstat"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// BenchmarkThousandHosts measures how long 1,000 new hosts take to become
// available against rackfence-bmcsim --latency 200ms, for several worker
// pool sizes, and the agent's RSS once they are. Run one size with e.g.
//
//	go test -run '^$' -bench 'BenchmarkThousandHosts/workers=256' -benchtime 1x ./agent/
func BenchmarkThousandHosts(b *testing.B) {
	for _, w := range []int{32, 128, 256, 512} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				e := newEnv(b, envOpts{bmcs: 1000, latency: 200 * time.Millisecond})
				e.applyMany(b, 1000)
				took, agent := e.timeToAvailable(b, 1000, fmt.Sprint(w))
				b.ReportMetric(took.Seconds(), "s-to-available")
				rss := procstat.RSSMiB(agent.Cmd.Process.Pid)
				b.ReportMetric(rss, "agent-RSS-MiB")
				fmt.Printf("1000 hosts to available, 200ms BMC latency, --workers %d: %.1f s; agent RSS %.0f MiB; CPU s used: agent %.1f, coordinator %.1f, bmcsim %.1f\n",
					w, took.Seconds(), rss, procstat.CPUSeconds(agent.Cmd.Process.Pid), procstat.CPUSeconds(e.coord.Cmd.Process.Pid), procstat.CPUSeconds(e.sim.Cmd.Process.Pid))
			}
		})
	}
}

// BenchmarkDetachLatency measures detach → acknowledged (the API call
// answered → the ack visible through the watch) over 200 detaches on a
// rack of 1,000 available hosts.
//
//	go test -run '^$' -bench BenchmarkDetachLatency -benchtime 1x ./agent/
func BenchmarkDetachLatency(b *testing.B) {
	for i := 0; i < b.N; i++ {
		e := newEnv(b, envOpts{bmcs: 1000, latency: 200 * time.Millisecond})
		e.applyMany(b, 1000)
		maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(b, "127.0.0.1"))
		_, agent := e.timeToAvailable(b, 1000, "", "--metrics-addr", maddr)
		time.Sleep(2 * time.Second) // let the first status writes settle

		acked := make(chan string, 16)
		wctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go e.followAcks(wctx, acked)
		var lat []time.Duration
		for j := 0; j < 200; j++ {
			name := fmt.Sprintf("h%04d", j*5)
			if _, err := e.admin.Detach(ctx(b), name, wire.IntentRequest{Reason: "bench"}); err != nil {
				b.Fatal(err)
			}
			answered := time.Now()
			select {
			case n := <-acked:
				if n != name {
					b.Fatalf("ack for %s while waiting for %s", n, name)
				}
			case <-time.After(30 * time.Second):
				b.Fatalf("no ack for %s within 30s", name)
			}
			lat = append(lat, time.Since(answered))
		}
		sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
		rss := procstat.RSSMiB(agent.Cmd.Process.Pid)
		b.ReportMetric(rss, "agent-RSS-MiB")
		sum := scrape(b, maddr, "rackfence_agent_intent_ack_seconds_sum")
		cnt := scrape(b, maddr, "rackfence_agent_intent_ack_seconds_count")
		if cnt > 0 {
			fmt.Printf("agent side (watch delivery → ack written): mean %.2f ms over %.0f acks\n", sum/cnt*1000, cnt)
		}
		fmt.Printf("detach → ack over 200 detaches, 1000 hosts: p50 %s p99 %s max %s; agent RSS %.0f MiB\n",
			p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond), rss)
	}
}

// applyMany creates hosts h0000… on rack r1, one per BMC, in parallel.
func (e *env) applyMany(tb testing.TB, n int) {
	var wg sync.WaitGroup
	ch := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ch {
				if _, _, err := e.admin.ApplyHost(context.Background(), e.hostSpec(fmt.Sprintf("h%04d", i), "r1", i)); err != nil {
					tb.Errorf("apply h%04d: %v", i, err)
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		ch <- i
	}
	close(ch)
	wg.Wait()
}

// timeToAvailable starts an agent (workers "" = its default) and returns
// how long until n hosts of r1 are available.
func (e *env) timeToAvailable(tb testing.TB, n int, workers string, extra ...string) (time.Duration, *testenv.Process) {
	args := append([]string{"--log-level", "warn"}, extra...)
	if workers != "" {
		args = append(args, "--workers", workers)
	}
	start := time.Now()
	a := e.startAgent("r1", "bench", args...)
	deadline := time.Now().Add(20 * time.Minute)
	for {
		l, err := e.admin.ListHosts(ctx(tb), client.HostFilter{Rack: "r1", State: wire.StateAvailable})
		if err == nil && len(l.Items) >= n {
			return time.Since(start), a
		}
		if time.Now().After(deadline) {
			tb.Fatalf("only %d of %d hosts available after 20 minutes", len(l.Items), n)
		}
		if a.Exited() {
			tb.Fatalf("agent exited:\n%s", a.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// followAcks watches r1 and sends the name of each host whose detach
// intent becomes acknowledged.
func (e *env) followAcks(ctx context.Context, out chan<- string) {
	seen := map[string]uint64{}
	var index uint64
	first := true
	for ctx.Err() == nil {
		r, err := e.admin.Watch(ctx, "r1", index, 30*time.Second)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for _, h := range r.Hosts {
			if h.Intents != nil && h.Intents.Detach != nil && h.Intents.Detach.Acknowledged &&
				seen[h.Name] != h.Intents.Detach.CreatedIndex {
				seen[h.Name] = h.Intents.Detach.CreatedIndex
				if !first {
					out <- h.Name
				}
			}
		}
		first = false
		index = r.Index
	}
}
