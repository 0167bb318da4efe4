package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// writeMeter is a ResponseWriter that keeps no body: it counts the bytes
// and remembers the largest single write.
type writeMeter struct {
	h          http.Header
	code       int
	total, max int
}

func (w *writeMeter) Header() http.Header { return w.h }
func (w *writeMeter) WriteHeader(c int)   { w.code = c }
func (w *writeMeter) Write(b []byte) (int, error) {
	w.total += len(b)
	w.max = max(w.max, len(b))
	return len(b), nil
}

// TestHostListStreams: a host list is written through one bounded buffer
// (no write, so no buffer, grows with the list) and allocates about as
// much per listed host whether the list has 400 hosts or 2,000.
func TestHostListStreams(t *testing.T) {
	testenv.SkipShort(t)
	n, admin := startLeader(t, "127.0.0.1")
	viewer := newToken(t, n.url, admin, wire.RoleViewer, "")
	const hosts = 2000
	var wg sync.WaitGroup
	errs := make(chan error, hosts)
	work := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				h := testHost(fmt.Sprintf("host-%05d", i), []string{"r1", "r2", "r3", "r4", "r5"}[i%5])
				h.Labels = map[string]string{"role": "compute", "zone": "a"}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := n.store.Apply(ctx, fsm.PutHostCmd{Host: h, Time: time.Now().UTC()})
				cancel()
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range hosts {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	h := n.srv.Handler()
	list := func(query string) (w *writeMeter, perHost float64) {
		var ms0, ms1 runtime.MemStats
		const runs = 5
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		for range runs {
			w = &writeMeter{h: http.Header{}}
			req := httptest.NewRequest("GET", "/v1/hosts?"+query, nil)
			req.Header.Set("Authorization", "Bearer "+viewer)
			h.ServeHTTP(w, req)
			if w.code != 200 {
				t.Fatalf("GET /v1/hosts?%s: %d", query, w.code)
			}
		}
		runtime.ReadMemStats(&ms1)
		return w, float64(ms1.TotalAlloc-ms0.TotalAlloc) / runs
	}
	small, smallAlloc := list("rack=r1")
	big, bigAlloc := list("")
	for _, c := range []struct {
		name string
		w    *writeMeter
	}{{"400 hosts", small}, {"2000 hosts", big}} {
		if c.w.max > listWriteBuffer {
			t.Errorf("%s: a write of %d bytes (answer %d bytes): the list was built in one buffer", c.name, c.w.max, c.w.total)
		}
	}
	perSmall, perBig := smallAlloc/(hosts/5), bigAlloc/hosts
	t.Logf("answer %d bytes; allocated per listed host: %.0f B at %d hosts, %.0f B at %d hosts", big.total, perSmall, hosts/5, perBig, hosts)
	if perBig > 1.5*perSmall+512 {
		t.Errorf("bytes allocated per listed host grow with the list: %.0f at %d hosts, %.0f at %d", perSmall, hosts/5, perBig, hosts)
	}
}
