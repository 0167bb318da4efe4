package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
)

// BenchmarkWatchStreamFanout measures what a streamed line costs the
// process per watcher: 500 streamed watchers of one rack over HTTP/2 and
// TLS (100 per connection, as the load tool's clients), b.N hosts written
// into the rack one at a time over HTTP/1.1, until every watcher read a
// line at the last write's index. It reports the lines sent per write, and
// per line the CPU (server and the watchers' reads, one process) and the
// allocations, and the writes' p99. Run it with -benchtime 200x;
// FANOUT_CPUPROFILE=file profiles the writes and their fan-out only.
func BenchmarkWatchStreamFanout(b *testing.B) {
	const watchers, perConn = 500, 100
	m := member.Open(b, member.Config{ID: "n1", IP: "127.0.0.1", Bootstrap: true, Secrets: testSecrets})
	srv := New(Config{Store: m.Store, State: m.Store.FSM(), Tier: "test", Logger: m.Logger, WatchTimeout: 30 * time.Second, Registry: m.Registry})
	m.Serve(srv.Handler(), func() { srv.Close() })
	defer m.Close()
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.EnableHTTP2 = true
	ts.Config.HTTP2 = &http.HTTP2Config{MaxEncoderHeaderTableSize: 1, MaxReadFrameSize: 16 << 10}
	ts.StartTLS()
	defer ts.Close()
	m.WaitLeader(b)
	admin := m.AdminToken(b)
	op := newToken(b, m.URL, admin, wire.RoleOperator, "")
	must(b, 201, "PUT", m.URL+"/v1/hosts/base", op, testHost("base", "r1"), nil)
	var first wire.WatchResponse
	must(b, 200, "GET", m.URL+"/v1/watch?rack=r1&index=0", op, nil, &first)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var lines atomic.Int64
	last := make([]atomic.Uint64, watchers)
	var wg sync.WaitGroup
	var hc *http.Client
	for i := 0; i < watchers; i++ {
		if i%perConn == 0 {
			hc = &http.Client{Transport: ts.Client().Transport.(*http.Transport).Clone()}
			defer hc.CloseIdleConnections()
		}
		wg.Add(1)
		go func(i int, hc *http.Client) {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/watch?rack=r1&index=%d&stream=true", ts.URL, first.Index), nil)
			req.Header.Set("Authorization", "Bearer "+op)
			resp, err := hc.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				var l struct {
					Index uint64 `json:"index"`
				}
				if json.Unmarshal(sc.Bytes(), &l) == nil {
					last[i].Store(l.Index)
					lines.Add(1)
				}
			}
		}(i, hc)
	}
	for end := time.Now().Add(2 * time.Minute); int(testutil.ToFloat64(srv.watches.streams)) < watchers; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			b.Fatalf("%.0f of %d streams open after 2 minutes", testutil.ToFloat64(srv.watches.streams), watchers)
		}
	}
	lines.Store(0)
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	lats := make([]time.Duration, b.N)
	if f := os.Getenv("FANOUT_CPUPROFILE"); f != "" { // the writes and fan-out only
		out, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		defer out.Close()
		_ = pprof.StartCPUProfile(out)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		must(b, 201, "PUT", fmt.Sprintf("%s/v1/hosts/w-%05d", m.URL, i), op, testHost(fmt.Sprintf("w-%05d", i), "r1"), nil)
		lats[i] = time.Since(t0)
	}
	var now wire.WatchResponse
	must(b, 200, "GET", m.URL+"/v1/watch?rack=r1&index=0", op, nil, &now)
	want := now.Index
	for end := time.Now().Add(5 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		behind := 0
		for i := range last {
			if last[i].Load() < want {
				behind++
			}
		}
		if behind == 0 {
			break
		}
		if time.Now().After(end) {
			b.Fatalf("%d of %d watchers not at index %d 5 minutes after the writes", behind, watchers, want)
		}
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	pprof.StopCPUProfile()
	runtime.ReadMemStats(&ms1)
	n := float64(lines.Load())
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	b.ReportMetric(n/float64(b.N), "lines/write")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/line")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/line")
	b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "write-p99-ms")
	cancel()
	wg.Wait()
}

// cpuTime is the process's CPU time (user and system) so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
