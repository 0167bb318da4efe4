package client_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
)

// dialShape is a client the way one of the project's programs builds
// it, over a transport whose dials are counted.
type dialShape struct {
	name string
	// transport is the program's transport before client.New (nil: the
	// default one, as rackfencectl's).
	transport func() *http.Transport
	// pinned: the token text's CA pin (agents, the load tool), else
	// the CA file (rackfencectl).
	pinned bool
}

var dialShapes = []dialShape{
	{name: "rackfencectl"},
	{name: "agent", transport: func() *http.Transport { return agent.CoordinatorTransport(nil) }, pinned: true},
	{name: "pinned token", pinned: true},
}

// newCountedClient builds s's client of m and counts the connections it
// dials.
func newCountedClient(t testing.TB, m *rig.Coordinator, s dialShape) (*client.Client, *atomic.Int64) {
	t.Helper()
	tok, err := client.ReadTokenFile(m.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if s.transport != nil {
		tr = s.transport()
	}
	var dials atomic.Int64
	d := &net.Dialer{Timeout: 30 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	cfg := client.Config{Coordinator: m.URL, Token: tok, RetryFor: -1, HTTPClient: &http.Client{Transport: tr}}
	if !s.pinned {
		cfg.Token, _ = wire.ParseToken(tok)
		cfg.CAFile = m.CAFile
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, &dials
}

// burst sends n requests at once from c and returns the first error.
func burst(ctx context.Context, c *client.Client, n int) (failed int64, first error) {
	var bad atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := c.Status(ctx); err != nil {
				bad.Add(1)
				once.Do(func() { first = err })
			}
		})
	}
	wg.Wait()
	return bad.Load(), first
}

// TestConcurrentFirstRequestsShareOneDial: 32 requests sent at once by a
// new client, built as each of the project's programs builds it, reach a
// real coordinator over one TLS connection: one dial, one handshake, not
// one per request.
func TestConcurrentFirstRequestsShareOneDial(t *testing.T) {
	if testing.Short() {
		t.Skip("a real coordinator")
	}
	m := startMember(t, "n1", "127.0.0.1", nil)
	adminClient(t, m, m.URL) // a leader
	const n = 32
	for _, s := range dialShapes {
		t.Run(s.name, func(t *testing.T) {
			c, dials := newCountedClient(t, m, s)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if bad, err := burst(ctx, c, n); bad > 0 {
				t.Fatalf("%d of %d requests failed, first: %v", bad, n, err)
			}
			if d := dials.Load(); d != 1 {
				t.Errorf("%d concurrent first requests dialed %d connections, want 1", n, d)
			}
			// Later requests reuse it.
			if bad, err := burst(ctx, c, n); bad > 0 {
				t.Fatalf("again: %d of %d requests failed, first: %v", bad, n, err)
			}
			if d := dials.Load(); d != 1 {
				t.Errorf("after a second burst: %d connections dialed, want 1", d)
			}
		})
	}
}

// BenchmarkFirstRequestBurst: 100 requests at once from a new client
// (rackfencectl's shape) to a real coordinator: the connections it
// dials (each one a TLS handshake on both sides) and the client's CPU
// (the coordinator is another process), per burst.
//
//	go test -run '^$' -bench FirstRequestBurst -benchtime 20x ./shared/client
func BenchmarkFirstRequestBurst(b *testing.B) {
	m := startMember(b, "n1", "127.0.0.1", nil)
	adminClient(b, m, m.URL)
	const n = 100
	ctx := context.Background()
	var dials int64
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		c, d := newCountedClient(b, m, dialShapes[0])
		if bad, err := burst(ctx, c, n); bad > 0 {
			b.Fatalf("%d of %d requests failed, first: %v", bad, n, err)
		}
		dials += d.Load()
		c.CloseIdleConnections()
	}
	b.StopTimer()
	b.ReportMetric(float64(dials)/float64(b.N), "dials/burst")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "client-cpu-ms/burst")
}

// cpuTime is this process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
