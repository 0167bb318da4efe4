package ctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// firstWrite is a stdout that calls first once, on the first write: a
// host list's first page is printed before its next page is asked.
type firstWrite struct {
	bytes.Buffer
	first func()
	done  bool
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if !w.done {
		w.done = true
		w.first()
	}
	return w.Buffer.Write(p)
}

// runEvicting runs rackfencectl against c with evict called once, when
// the command prints its first bytes (after its first page).
func runEvicting(t *testing.T, c *coord, evict func(), args ...string) (result, string) {
	t.Helper()
	out := &firstWrite{first: evict}
	r := runCtl(t, map[string]string{"RACKFENCE_COORDINATOR": c.url, "RACKFENCE_TOKEN_FILE": c.tokenFile}, "",
		func(io *IO) { io.Stdout = out }, args...)
	return r, out.String()
}

// TestHostListOutlivesView: a host list whose view the coordinator drops
// while it is printed (17 newer lists evict it after the first page)
// completes as a table, every host once, with one note on stderr naming
// the host after which rows come from a newer view; -o json fails with
// list_expired and a hint naming --chunk-size.
func TestHostListOutlivesView(t *testing.T) {
	testenv.SkipShort(t) // a coordinator process
	c := startCoordinator(t)
	ctx := context.Background()
	if err := c.admin.SetCredentials(ctx, "c1", wire.Credentials{Username: "u", Password: "p"}); err != nil {
		t.Fatal(err)
	}
	apply := func(name, rack string) {
		h := wire.Host{Name: name, Rack: rack, Online: true,
			BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9001/redfish/v1/Systems/1", Credentials: "c1"}}
		if _, _, err := c.admin.ApplyHost(ctx, &h); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for i := range 6 {
		want = append(want, fmt.Sprintf("r1-h%02d", i))
		apply(want[i], "r1")
	}
	// evict takes 17 newer lists, each at a new index (a host of another
	// rack applied before each), so the list being printed loses its view.
	stop := errors.New("stop")
	round := 0
	evict := func() {
		round++
		for i := range 17 { // a coordinator keeps 16 views (api.MaxListViews)
			apply(fmt.Sprintf("r2-e%d-%02d", round, i), "r2")
			err := c.admin.ListHostsPages(ctx, client.HostFilter{}, client.PageOptions{Limit: 1}, func(*wire.List[wire.Host]) error { return stop })
			if !errors.Is(err, stop) {
				t.Error(err)
				return
			}
		}
	}
	run := func(args ...string) (result, string) { return runEvicting(t, c, evict, args...) }

	r, out := run("host", "list", "--rack", "r1", "--chunk-size", "2")
	if r.code != 0 {
		t.Fatalf("table: %s%s", r, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		got = append(got, strings.Fields(l)[0])
	}
	if !slices.Equal(got, want) {
		t.Fatalf("table rows %v, want %v:\n%s", got, want, out)
	}
	t.Logf("table with the view gone after its first page:\n%s%s", out, r.stderr)
	if note := "rows after r1-h01 come from a newer view"; strings.Count(r.stderr, "note:") != 1 || !strings.Contains(r.stderr, note) {
		t.Fatalf("stderr %q: want one note with %q", r.stderr, note)
	}

	r, out = run("host", "list", "--rack", "r1", "--chunk-size", "2", "-o", "json")
	if r.code == 0 || !strings.Contains(r.stderr, wire.CodeListExpired) && !strings.Contains(r.stderr, "no longer keeps") || !strings.Contains(r.stderr, "--chunk-size") {
		t.Fatalf("-o json of an expired list: %s%s", r, out)
	}
}

// TestCredentialsListOutlivesView: credentials list's table whose view
// the coordinator drops after the first page goes on after its last row
// (after=NAME), every record once, with one note on stderr; -o json fails
// with list_expired.
func TestCredentialsListOutlivesView(t *testing.T) {
	testenv.SkipShort(t) // a coordinator process
	c := startCoordinator(t)
	ctx := context.Background()
	set := func(name string) {
		if err := c.admin.SetCredentials(ctx, name, wire.Credentials{Username: "u", Password: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("c%d", i))
		set(want[i])
	}
	stop := errors.New("stop")
	round := 0
	evict := func() {
		round++
		for i := range 17 { // a coordinator keeps 16 views (api.MaxListViews)
			name := fmt.Sprintf("z%d-%02d", round, i)
			set(name)
			if round == 1 {
				want = append(want, name) // at the list's end: the table shows them
			}
			err := c.admin.CredentialsPages(ctx, client.PageOptions{Limit: 1}, func(*wire.List[wire.Credentials]) error { return stop })
			if !errors.Is(err, stop) {
				t.Error(err)
				return
			}
		}
	}
	run := func(args ...string) (result, string) { return runEvicting(t, c, evict, args...) }
	r, out := run("credentials", "list", "--chunk-size", "2")
	if r.code != 0 {
		t.Fatalf("table: %s%s", r, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if f := strings.Fields(l)[0]; f != "bmc" { // the coordinator's own record, if any
			got = append(got, f)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("table rows %v, want %v:\n%s", got, want, out)
	}
	if note := "rows after c1 come from a newer view"; strings.Count(r.stderr, "note:") != 1 || !strings.Contains(r.stderr, note) {
		t.Fatalf("stderr %q: want one note with %q", r.stderr, note)
	}
	r, out = run("credentials", "list", "--chunk-size", "2", "-o", "json")
	if r.code == 0 || !strings.Contains(r.stderr, "no longer keeps") {
		t.Fatalf("-o json of an expired list: %s%s", r, out)
	}
}
