package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestListHostsPagesRestartExpired: a host list whose view the
// coordinator dropped (17 newer lists evicted it) fails with
// wire.ErrListExpired, or, with RestartExpired, goes on by itself after
// the last host given: no host twice, the hosts created meanwhile after
// it included, one created meanwhile before it missed (as documented).
func TestListHostsPagesRestartExpired(t *testing.T) {
	if testing.Short() {
		t.Skip("a real coordinator")
	}
	m := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{NodeID: "n1", IP: "127.0.0.1"})
	ctx := context.Background()
	host := func(name string) *wire.Host {
		return &wire.Host{Name: name, Rack: "r1", Online: true, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9/redfish/v1/Systems/1", Credentials: "bmc"}}
	}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		m.Apply(host(n))
	}
	stop := errors.New("stop")
	evict := func(round int) {
		m.Apply(host("a0" + fmt.Sprint(round))) // sorts before the last host given
		for i := range client.MaxListViewsForTest + 1 {
			m.Apply(host(fmt.Sprintf("x%d-%02d", round, i)))
			if err := m.Admin.ListHostsPages(ctx, client.HostFilter{}, client.PageOptions{Limit: 1}, func(*wire.List[wire.Host]) error { return stop }); !errors.Is(err, stop) {
				t.Fatal(err)
			}
		}
	}
	// The lists under test go through a transport that records their
	// queries: a restart asks after the last host, never a page before.
	rec := &queries{next: testenv.HTTPClient(m.CAFile).Transport}
	tok, err := client.ReadTokenFile(m.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(client.Config{Coordinator: m.URL, Token: tok, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	for _, restart := range []bool{false, true} {
		var got, restarted []string
		pages, firstLast := 0, ""
		rec.reset()
		o := client.PageOptions{Limit: 2, RestartExpired: restart, Restarted: func(after string) { restarted = append(restarted, after) }}
		err := cl.ListHostsPages(ctx, client.HostFilter{}, o, func(l *wire.List[wire.Host]) error {
			for _, h := range l.Items {
				got = append(got, h.Name)
			}
			if pages++; pages == 1 {
				firstLast = got[len(got)-1]
				evict(pages + len(got) + map[bool]int{false: 0, true: 100}[restart])
			}
			return nil
		})
		if !restart {
			if !errors.Is(err, wire.ErrListExpired) {
				t.Fatalf("without RestartExpired: %v, want list_expired", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("restarted list gave %v: want each host once, in order", got)
		}
		for _, want := range []string{"a", "b", "c", "f", "x103-00", "x103-16"} {
			if !slices.Contains(got, want) {
				t.Fatalf("restarted list gave %v: %s missing", got, want)
			}
		}
		if slices.Contains(got, "a0103") {
			t.Fatalf("restarted list gave %v: a0103, created before the last host given, cannot be in it", got)
		}
		if !slices.Equal(restarted, []string{firstLast}) {
			t.Fatalf("Restarted called with %v, want [%s]", restarted, firstLast)
		}
		// Every request but the first two (the first page, the one
		// answered list_expired) and the restart continues a list.
		qs := rec.list()
		t.Logf("restarted list: %d requests of GET /v1/hosts for %d hosts given", len(qs), len(got))
		if len(qs) < 4 || qs[0].Has(wire.ParamContinue) || !qs[1].Has(wire.ParamContinue) {
			t.Fatalf("requests %v", qs)
		}
		if r := qs[2]; r.Get(wire.ParamAfter) != firstLast || r.Has(wire.ParamContinue) {
			t.Fatalf("the restart asked %v: want after=%s without continue (no page before it read again)", r, firstLast)
		}
		for _, r := range qs[3:] {
			if !r.Has(wire.ParamContinue) || r.Has(wire.ParamAfter) {
				t.Fatalf("after the restart, %v: want the new list's continue alone", r)
			}
		}
	}
}

// queries records the query of every GET /v1/hosts through it.
type queries struct {
	next http.RoundTripper
	mu   sync.Mutex
	qs   []url.Values
}

func (q *queries) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/v1/hosts" {
		q.mu.Lock()
		q.qs = append(q.qs, r.URL.Query())
		q.mu.Unlock()
	}
	return q.next.RoundTrip(r)
}

func (q *queries) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.qs = nil
}

func (q *queries) list() []url.Values {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.qs)
}
