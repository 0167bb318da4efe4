package main

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// heapConns is how many idle client connections BenchmarkHTTP2ConnHeap
// holds to the coordinator.
const heapConns = 300

// BenchmarkHTTP2ConnHeap measures what an idle HTTP/2 client connection
// costs a real coordinator's heap (after a collection, from its
// --pprof-addr): heapConns connections that each sent 20 requests with
// an agent's headers and a path that changes (as a watch's index does),
// from the agent's transport (no HPACK encoder table) and from net/http's
// default one (a 4 KiB table the coordinator's decoder mirrors). Run with
// -benchtime 1x.
func BenchmarkHTTP2ConnHeap(b *testing.B) {
	for _, shape := range []string{"agent", "net-http"} {
		b.Run(shape, func(b *testing.B) {
			for range b.N {
				perConn := connHeap(b, shape, heapConns)
				b.ReportMetric(perConn, "heap-B/conn")
			}
		})
	}
}

func connHeap(t testing.TB, shape string, n int) float64 {
	bin := testenv.Binary(t, "rackfence-coordinator")
	pp := testenv.FreePort(t, "127.0.0.1")
	ms, token := startCluster(t, bin, 1, clusterOpts{prepare: func(m *member) {
		m.args = append(m.args, "--pprof-addr", fmt.Sprintf("127.0.0.1:%d", pp))
	}})
	m := ms[0]
	secret, pin := wire.ParseToken(token)
	heap := func() (int64, int64) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?debug=1&gc=1", pp))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		g := func(k string) int64 {
			mm := regexp.MustCompile(`# ` + k + ` = (\d+)`).FindSubmatch(b)
			v, _ := strconv.ParseInt(string(mm[1]), 10, 64)
			return v
		}
		return g("HeapInuse"), g("HeapAlloc")
	}
	time.Sleep(2 * time.Second)
	heap()
	_, a0 := heap()
	var trs []*http.Transport
	for i := range n {
		cfg, _ := pki.ClientTLS(nil, pin)
		var tr *http.Transport
		if shape == "agent" {
			tr = agent.CoordinatorTransport(cfg)
		} else {
			tr = http.DefaultTransport.(*http.Transport).Clone()
			tr.TLSClientConfig = cfg
		}
		trs = append(trs, tr)
		hc := &http.Client{Transport: tr}
		for j := range 20 {
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/v1/whoami?index=%d&agent=a%d", m.url(), 1000+j, i), nil)
			req.Header.Set("Authorization", "Bearer "+secret)
			req.Header.Set("User-Agent", fmt.Sprintf("rackfence-agent/dev (a%d; rack r%d)", i, i))
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	time.Sleep(time.Second)
	heap()
	_, a1 := heap()
	for _, tr := range trs {
		tr.CloseIdleConnections()
	}
	m.proc.Stop(30 * time.Second)
	return float64(a1-a0) / float64(n)
}
