package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/api"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
)

// evictingTransport, before the second request it passes, makes a
// coordinator drop the view of the list being read: MaxListViews+1
// newer lists, each at a new index.
type evictingTransport struct {
	next  http.RoundTripper
	n     int
	evict func()
	sent  []string
}

func (e *evictingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if e.n++; e.n == 2 {
		e.evict()
	}
	e.sent = append(e.sent, req.URL.RawQuery)
	return e.next.RoundTrip(req)
}

// TestOperatorListGoesOnAfterExpiry: the fleet bench's operator lists
// (paged and summary) whose view a real coordinator dropped between two
// pages go on after the last host read (after=), as rackfencectl's
// table and the Go client do, instead of counting a failed list.
func TestOperatorListGoesOnAfterExpiry(t *testing.T) {
	if testing.Short() {
		t.Skip("a real coordinator")
	}
	m := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{NodeID: "n1", IP: "127.0.0.1"})
	host := func(name string) *wire.Host {
		return &wire.Host{Name: name, Rack: "r1", Online: true, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9/redfish/v1/Systems/1", Credentials: "bmc"}}
	}
	for i := range 6 {
		m.Apply(host(fmt.Sprintf("h%d", i)))
	}
	tok, err := client.ReadTokenFile(m.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stop := errors.New("stop")
	round := 0
	evict := func() {
		round++
		for i := range api.MaxListViews + 1 {
			m.Apply(host(fmt.Sprintf("x%d-%02d", round, i)))
			if err := m.Admin.ListHostsPages(ctx, client.HostFilter{}, client.PageOptions{Limit: 1}, func(*wire.List[wire.Host]) error { return stop }); !errors.Is(err, stop) {
				t.Fatal(err)
			}
		}
	}
	for _, mode := range []string{OpPaged, OpSummary} {
		t.Run(mode, func(t *testing.T) {
			hc := NewHTTPClientFor(1, tok)
			tr := &evictingTransport{next: hc.Transport, evict: evict}
			hc.Transport = tr
			var buf bytes.Buffer
			_, pages, wentOn, err := listHosts(ctx, hc, m.URL, secretOf(tok), mode, 2, &buf)
			if err != nil {
				t.Fatalf("a list whose view was dropped between pages: %v (queries %q)", err, tr.sent)
			}
			if wentOn != 1 {
				t.Errorf("went on %d times, want 1 (queries %q)", wentOn, tr.sent)
			}
			// The page after the expired one asks after the last host read.
			if len(tr.sent) < 3 || !strings.Contains(tr.sent[2], wire.ParamAfter+"=h1") {
				t.Errorf("queries %q: want the third after=h1", tr.sent)
			}
			if pages < 4 {
				t.Errorf("%d pages for 6 hosts and more by 2", pages)
			}
		})
	}
}

func secretOf(token string) string {
	s, _ := wire.ParseToken(token)
	return s
}
