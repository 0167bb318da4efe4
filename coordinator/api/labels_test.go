package api

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestLabelsAndSelector: labels are stored by PUT, returned by GET, and
// GET /v1/hosts?selector= narrows the list; bad labels and bad selectors
// are 400s naming the field.
func TestLabelsAndSelector(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	viewer := newToken(t, u, admin, wire.RoleViewer, "")

	put := func(name, rack string, labels map[string]string) {
		h := testHost(name, rack)
		h.Labels = labels
		must(t, 201, "PUT", u+"/v1/hosts/"+name, op, h, nil)
	}
	put("h1", "r1", map[string]string{"role": "compute", "zone": "a"})
	put("h2", "r1", map[string]string{"role": "storage", "zone": "b"})
	put("h3", "r2", nil)

	var got wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", viewer, nil, &got)
	if !reflect.DeepEqual(got.Labels, map[string]string{"role": "compute", "zone": "a"}) {
		t.Fatalf("GET labels = %v", got.Labels)
	}

	list := func(q string) []string {
		var l wire.List[wire.Host]
		must(t, 200, "GET", u+"/v1/hosts?"+q, viewer, nil, &l)
		out := []string{}
		for _, h := range l.Items {
			out = append(out, h.Name)
		}
		return out
	}
	sel := func(s string) string { return "selector=" + url.QueryEscape(s) }
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{sel("role=compute"), []string{"h1"}},
		{sel("role==compute"), []string{"h1"}},
		{sel("zone!=a"), []string{"h2", "h3"}},
		{sel("!role"), []string{"h3"}},
		{sel("zone in (a,b),role notin (storage)"), []string{"h1"}},
		{sel("zone") + "&rack=r1", []string{"h1", "h2"}},
		{sel("!zone") + "&rack=r1", []string{}},
		{sel(""), []string{"h1", "h2", "h3"}},
	} {
		if got := list(tc.q); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GET /v1/hosts?%s = %v, want %v", tc.q, got, tc.want)
		}
	}

	for _, bad := range []string{"role compute", "zone in (a", "-x=y", "role=a b"} {
		d := errBody(t, must(t, 400, "GET", u+"/v1/hosts?"+sel(bad), viewer, nil, nil))
		if d.Field != "selector" || !strings.Contains(d.Message, "selector") || !strings.Contains(d.Message, "key") {
			t.Errorf("selector %q: error %+v does not name the selector and what is wrong", bad, d)
		}
	}

	h := testHost("h4", "r1")
	h.Labels = map[string]string{"role": "compute", "Bad Key": "x"}
	d := errBody(t, must(t, 400, "PUT", u+"/v1/hosts/h4", op, h, nil))
	if d.Field != "labels" || !strings.Contains(d.Message, `"Bad Key"`) {
		t.Errorf("bad label: %+v", d)
	}
	h.Labels = map[string]string{"role": strings.Repeat("v", 64)}
	d = errBody(t, must(t, 400, "PUT", u+"/v1/hosts/h4", op, h, nil))
	if d.Field != "labels" || !strings.Contains(d.Message, `key "role"`) || !strings.Contains(d.Message, "at most 63") {
		t.Errorf("long label value: %+v", d)
	}
}
