package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// listAll reads every page of GET /v1/hosts?query, checking that each
// page has at most limit items and carries the first page's index.
func listAll(t *testing.T, u, token, query string, limit int, between func(page int)) ([]wire.Host, uint64) {
	t.Helper()
	var all []wire.Host
	var index uint64
	cont := ""
	for page := 0; ; page++ {
		q, _ := url.ParseQuery(query)
		q.Set(wire.ParamLimit, fmt.Sprint(limit))
		if cont != "" {
			q.Set(wire.ParamContinue, cont)
			q.Del(wire.ParamAfter) // a list's later pages: continue alone
		}
		var l wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?"+q.Encode(), token, nil, &l)
		if len(l.Items) > limit {
			t.Fatalf("page %d has %d items, limit %d", page, len(l.Items), limit)
		}
		if page == 0 {
			index = l.Index
		} else if l.Index != index {
			t.Fatalf("page %d is at index %d, the first at %d", page, l.Index, index)
		}
		if l.Continue != "" && len(l.Items) != limit {
			t.Fatalf("page %d has %d items (limit %d) yet a continue token", page, len(l.Items), limit)
		}
		all = append(all, l.Items...)
		if l.Continue == "" {
			return all, index
		}
		cont = l.Continue
		if between != nil {
			between(page)
		}
	}
}

func names(hs []wire.Host) []string {
	out := make([]string, len(hs))
	for i := range hs {
		out[i] = hs[i].Name
	}
	return out
}

func TestHostListPages(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	viewer := newToken(t, u, admin, wire.RoleViewer, "")
	for i := range 23 {
		h := testHost(fmt.Sprintf("h%02d", i), []string{"r1", "r2"}[i%2])
		if i%3 == 0 {
			h.Labels = map[string]string{"role": "compute"}
		}
		must(t, 201, "PUT", u+"/v1/hosts/"+h.Name, op, h, nil)
	}
	var whole wire.List[wire.Host]
	must(t, 200, "GET", u+"/v1/hosts", viewer, nil, &whole)
	if len(whole.Items) != 23 || whole.Continue != "" {
		t.Fatalf("unpaged list: %d hosts, continue %q", len(whole.Items), whole.Continue)
	}

	t.Run("one index while hosts change between pages", func(t *testing.T) {
		var before wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts", viewer, nil, &before)
		changed := testHost("h20", "r1")
		changed.Consumer = "someone"
		got, _ := listAll(t, u, viewer, "", 5, func(page int) {
			if page == 0 {
				must(t, 201, "PUT", u+"/v1/hosts/h99", op, testHost("h99", "r1"), nil)
				must(t, 201, "PUT", u+"/v1/hosts/h10a", op, testHost("h10a", "r1"), nil)
				must(t, 200, "PUT", u+"/v1/hosts/h20", op, changed, nil)
				must(t, 200, "DELETE", u+"/v1/hosts/h21", op, nil, nil)
			}
		})
		if !slices.Equal(names(got), names(before.Items)) {
			t.Fatalf("pages list %v, the list at their index is %v", names(got), names(before.Items))
		}
		for _, h := range got {
			if h.Name == "h20" && h.Consumer != "" {
				t.Fatalf("h20 answered as changed after the list's index: %+v", h)
			}
		}
		after, _ := listAll(t, u, viewer, "", 5, nil)
		if !slices.Contains(names(after), "h10a") || slices.Contains(names(after), "h21") {
			t.Fatalf("a new list does not see the changes: %v", names(after))
		}
	})

	t.Run("filters before paging", func(t *testing.T) {
		var want wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?rack=r2&selector=role%3Dcompute", viewer, nil, &want)
		if len(want.Items) < 3 {
			t.Fatalf("too few matching hosts to page: %v", names(want.Items))
		}
		got, _ := listAll(t, u, viewer, "rack=r2&selector=role%3Dcompute", 2, nil)
		if !slices.Equal(names(got), names(want.Items)) {
			t.Fatalf("paged %v, unpaged %v", names(got), names(want.Items))
		}
	})

	t.Run("summary", func(t *testing.T) {
		got, _ := listAll(t, u, viewer, "view=summary", 7, nil)
		for _, h := range got {
			if h.BMC.Address != "" || h.BootMACAddress != "" || h.Rack == "" {
				t.Fatalf("summary item %+v", h)
			}
		}
		raw := must(t, 200, "GET", u+"/v1/hosts?view=summary&limit=1", viewer, nil, nil)
		var l wire.List[wire.HostSummary]
		if err := jsonStrict(raw, &l); err != nil {
			t.Fatalf("summary page is not HostSummary items: %v: %s", err, raw)
		}
	})

	t.Run("validation", func(t *testing.T) {
		var first wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?limit=2", viewer, nil, &first)
		for _, c := range []struct{ query, field string }{
			{"limit=0", "limit"}, {"limit=-1", "limit"}, {"limit=ten", "limit"}, {"limit=5001", "limit"},
			{"continue=garbage", "continue"}, {"continue=" + first.Continue + "&rack=r1", "continue"},
			{"continue=" + first.Continue + "&view=summary", "continue"}, {"view=full", "view"},
		} {
			if d := errBody(t, must(t, 400, "GET", u+"/v1/hosts?"+c.query, viewer, nil, nil)); d.Field != c.field {
				t.Errorf("%s: field %q, want %q (%s)", c.query, d.Field, c.field, d.Message)
			}
		}
	})

	// after=NAME starts a list after a host name (one that need not
	// exist), with the filters, limit and view, paged or whole.
	t.Run("after", func(t *testing.T) {
		after := func(hs []wire.Host, name string) []string {
			var out []string
			for _, n := range names(hs) {
				if n > name {
					out = append(out, n)
				}
			}
			return out
		}
		var all, r2 wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts", viewer, nil, &all)
		must(t, 200, "GET", u+"/v1/hosts?rack=r2&selector=role%3Dcompute", viewer, nil, &r2)
		for _, c := range []struct {
			query, name string
			want        []string
		}{
			{"after=h10", "h10", after(all.Items, "h10")},
			{"after=h105", "h105", after(all.Items, "h105")}, // no such host
			{"after=h03&rack=r2&selector=role%3Dcompute&view=summary", "h03", after(r2.Items, "h03")},
			{"after=zz", "zz", nil},
		} {
			got, _ := listAll(t, u, viewer, c.query, 3, nil)
			if !slices.Equal(names(got), c.want) {
				t.Errorf("%s in pages of 3: %v, want %v", c.query, names(got), c.want)
			}
			var whole wire.List[wire.Host]
			must(t, 200, "GET", u+"/v1/hosts?"+c.query, viewer, nil, &whole)
			if !slices.Equal(names(whole.Items), c.want) || whole.Continue != "" {
				t.Errorf("%s whole: %v (continue %q), want %v", c.query, names(whole.Items), whole.Continue, c.want)
			}
		}
		var first wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?limit=2", viewer, nil, &first)
		for _, q := range []string{"after=H_1", "after=", "after=-h", "after=h01&after=h02",
			"after=h01&limit=2&continue=" + url.QueryEscape(first.Continue)} {
			d := errBody(t, must(t, 400, "GET", u+"/v1/hosts?"+q, viewer, nil, nil))
			if d.Field != wire.ParamAfter || !strings.Contains(d.Message, "after") {
				t.Errorf("%s: field %q, want after (%s)", q, d.Field, d.Message)
			}
		}
	})

	t.Run("gone index", func(t *testing.T) {
		var first wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?limit=2", viewer, nil, &first)
		must(t, 200, "PUT", u+"/v1/hosts/h99", op, testHost("h99", "r1"), nil) // moves the applied index on
		var skew atomic.Int64
		n.srv.lists.hosts.mu.Lock()
		n.srv.lists.hosts.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		n.srv.lists.hosts.mu.Unlock()
		var next wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?limit=2&continue="+first.Continue, viewer, nil, &next)
		skew.Store(int64(ListViewMaxAge + time.Second))
		d := errBody(t, must(t, 410, "GET", u+"/v1/hosts?limit=2&continue="+next.Continue, viewer, nil, nil))
		if d.Code != wire.CodeListExpired {
			t.Fatalf("expired list: %+v", d)
		}

		// A list read to its end lets its view go ListViewLinger later,
		// not ListViewMaxAge.
		skew.Store(0)
		must(t, 200, "GET", u+"/v1/hosts?limit=2", viewer, nil, &first)
		must(t, 200, "PUT", u+"/v1/hosts/h99", op, testHost("h99", "r1"), nil)
		must(t, 200, "GET", u+"/v1/hosts?limit=2&continue="+first.Continue, viewer, nil, nil)
		listAll(t, u, viewer, "", 50, nil) // another list, at a later index
		var last wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?limit=5000&continue="+first.Continue, viewer, nil, &last)
		if last.Continue != "" || last.Index != first.Index {
			t.Fatalf("the rest of the list: index %d (first page %d), continue %q", last.Index, first.Index, last.Continue)
		}
		skew.Store(int64(ListViewLinger + time.Second))
		if d := errBody(t, must(t, 410, "GET", u+"/v1/hosts?limit=2&continue="+first.Continue, viewer, nil, nil)); d.Code != wire.CodeListExpired {
			t.Fatalf("a finished list's view %s later: %+v", ListViewLinger, d)
		}
	})

	// A list read slowly, a page every 15-20 s, is released a minute after
	// its first page however often it is read: the records its view
	// holds (replaced since) are not kept longer than that.
	t.Run("slow list released", func(t *testing.T) {
		var skew atomic.Int64
		n.srv.lists.hosts.mu.Lock()
		n.srv.lists.hosts.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		n.srv.lists.hosts.mu.Unlock()
		var l wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?limit=1", viewer, nil, &l)
		// A write after the first page: the view now holds a record
		// replaced since (h99 exists when the subtests before ran).
		if code, raw := call(t, "PUT", u+"/v1/hosts/h99", op, testHost("h99", "r1"), nil); code != 200 && code != 201 {
			t.Fatalf("PUT h99: %d %s", code, raw)
		}
		for step, at := range []int{20, 40, 55, 75} {
			skew.Store(int64(time.Duration(at) * time.Second))
			var next wire.List[wire.Host]
			code, raw := call(t, "GET", u+"/v1/hosts?limit=1&continue="+url.QueryEscape(l.Continue), viewer, nil, nil)
			switch {
			case code == 410 && at > 60:
				if d := errBody(t, raw); d.Code != wire.CodeListExpired {
					t.Fatalf("a list %d s after its first page: %+v", at, d)
				}
				return
			case code != 200:
				t.Fatalf("page %d (%d s after the first): %d %s", step+1, at, code, raw)
			case at > 60:
				t.Fatalf("page %d served %d s after the first page: a list's view is kept as long as it is read", step+1, at)
			}
			if err := json.Unmarshal(raw, &next); err != nil || next.Continue == "" {
				t.Fatalf("page %d: %v %s", step+1, err, raw)
			}
			l = next
		}
	})
}

func jsonStrict(raw []byte, out any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(out)
}

// TestHostSummaryCarriesHandoff: a summary page names a pivoted-in
// host's handoff (the dashboard, which reads summaries, shows a host
// awaiting its handoff from it).
func TestHostSummaryCarriesHandoff(t *testing.T) {
	f := fsm.NewFSM()
	h := testHost("h1", "r1")
	h.Handoff = &wire.Handoff{SourceTier: "a", SourceClusterID: "c-a", DetachIndex: 7}
	data, err := fsm.Encode(fsm.PutHostCmd{Host: h, Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Apply(1, data).(fsm.Result); r.Err != nil {
		t.Fatal(r.Err)
	}
	w := httptest.NewRecorder()
	writeHostPage(w, f.HostsView(""), 0, &hostQuery{summary: true})
	var l wire.List[wire.HostSummary]
	if err := jsonStrict(w.Body.Bytes(), &l); err != nil {
		t.Fatalf("%v: %s", err, w.Body.Bytes())
	}
	if len(l.Items) != 1 || l.Items[0].Handoff == nil || *l.Items[0].Handoff != *h.Handoff {
		t.Fatalf("summary of a host with a handoff: %s", w.Body.Bytes())
	}
}
