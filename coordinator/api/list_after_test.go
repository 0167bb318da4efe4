package api

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestOtherListsGoOnAfter: the credentials, the tokens and a rack's lease
// history start after the item after= names (the last one read: its
// name, CREATED,ID, its epoch), at the current index, paged or whole;
// after= is refused (400 naming after) when malformed, with continue, or
// on a host's events, which take none; and a list that expired says what
// to do: go on with after=, or the command that reads it again.
func TestOtherListsGoOnAfter(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	for i := range 5 {
		must(t, 201, "PUT", fmt.Sprintf("%s/v1/credentials/c%d", u, i), admin, wire.Credentials{Username: "admin", Password: "password"}, nil)
	}
	for range 4 {
		newToken(t, u, admin, wire.RoleViewer, "")
	}
	must(t, 201, "PUT", u+"/v1/hosts/h1", admin, testHost("h1", "r1"), nil)
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	for i := range 4 {
		var l wire.Lease
		must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: fmt.Sprint("agent-", i), TTL: wire.Duration(60e9)}, &l)
		must(t, 200, "DELETE", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: fmt.Sprint("agent-", i), Epoch: l.Epoch}, nil)
	}

	var creds wire.List[wire.Credentials]
	must(t, 200, "GET", u+"/v1/credentials", admin, nil, &creds)
	var toks wire.List[wire.Token]
	must(t, 200, "GET", u+"/v1/tokens", admin, nil, &toks)
	var leases wire.List[wire.LeaseRecord]
	must(t, 200, "GET", u+"/v1/racks/r1/leases", admin, nil, &leases)
	lists := []struct {
		path   string
		after  string // the after value of the whole list's second item
		names  []string
		get    func(q string) []string
		refuse string // a malformed after
	}{
		{"/v1/credentials", wire.CredentialsAfter(&creds.Items[1]), itemNames(creds.Items, func(c *wire.Credentials) string { return c.Name }),
			func(q string) []string {
				var l wire.List[wire.Credentials]
				must(t, 200, "GET", u+"/v1/credentials"+q, admin, nil, &l)
				return itemNames(l.Items, func(c *wire.Credentials) string { return c.Name })
			}, "-bad-"},
		{"/v1/tokens", wire.TokenAfter(&toks.Items[1]), itemNames(toks.Items, func(k *wire.Token) string { return k.ID }),
			func(q string) []string {
				var l wire.List[wire.Token]
				must(t, 200, "GET", u+"/v1/tokens"+q, admin, nil, &l)
				return itemNames(l.Items, func(k *wire.Token) string { return k.ID })
			}, toks.Items[1].ID},
		{"/v1/racks/r1/leases", wire.LeaseAfter(&leases.Items[1]), itemNames(leases.Items, func(r *wire.LeaseRecord) string { return fmt.Sprint(r.Epoch) }),
			func(q string) []string {
				var l wire.List[wire.LeaseRecord]
				must(t, 200, "GET", u+"/v1/racks/r1/leases"+q, admin, nil, &l)
				return itemNames(l.Items, func(r *wire.LeaseRecord) string { return fmt.Sprint(r.Epoch) })
			}, "-1"},
	}
	for _, l := range lists {
		t.Run(l.path, func(t *testing.T) {
			if len(l.names) < 4 {
				t.Fatalf("the whole list has %d items", len(l.names))
			}
			a := "?after=" + url.QueryEscape(l.after)
			if got, want := l.get(a), l.names[2:]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("after the second item, unpaged: %v, want %v", got, want)
			}
			if got, want := l.get(a+"&limit=1"), l.names[2:3]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("after the second item, a page of 1: %v, want %v", got, want)
			}
			// The page after it goes on from there.
			var first wire.List[map[string]any]
			must(t, 200, "GET", u+l.path+a+"&limit=1", admin, nil, &first)
			if first.Continue == "" {
				t.Fatal("a first page after the second item has no continue")
			}
			if got, want := l.get("?continue="+url.QueryEscape(first.Continue)), l.names[3:]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("the page after it: %v, want %v", got, want)
			}
			for _, bad := range []string{"?after=" + url.QueryEscape(l.refuse), a + "&continue=" + url.QueryEscape(first.Continue), a + "&after=x"} {
				if d := errBody(t, must(t, 400, "GET", u+l.path+bad, admin, nil, nil)); d.Field != wire.ParamAfter {
					t.Errorf("%s: field %q, want after", bad, d.Field)
				}
			}
			n.srv.lists.items.mu.Lock()
			clear(n.srv.lists.items.m)
			n.srv.lists.items.mu.Unlock()
			must(t, 201, "PUT", u+"/v1/credentials/gone-"+strings.ReplaceAll(strings.Trim(l.path, "/"), "/", "-"), admin, wire.Credentials{Username: "a", Password: "p"}, nil)
			d := errBody(t, must(t, 410, "GET", u+l.path+"?continue="+url.QueryEscape(first.Continue), admin, nil, nil))
			if !strings.Contains(d.Message, "after=") || !strings.Contains(d.Message, "rackfencectl ") {
				t.Errorf("list_expired says %q: want how to go on (after=) and the command", d.Message)
			}
		})
	}

	t.Run("events", func(t *testing.T) {
		if d := errBody(t, must(t, 400, "GET", u+"/v1/hosts/h1/events?after=1", admin, nil, nil)); d.Field != wire.ParamAfter {
			t.Errorf("events?after=1: field %q, want after", d.Field)
		}
	})
}

// TestEventsExpiredNamesTheCommand: a host's events list that expired
// says which command reads it again.
func TestEventsExpiredNamesTheCommand(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	must(t, 201, "PUT", u+"/v1/hosts/h1", admin, testHost("h1", "r1"), nil)
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	var held wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "holder", TTL: wire.Duration(300e9)}, &held)
	for i := range 3 {
		rep := wire.StatusReport{Epoch: held.Epoch, Status: wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK},
			Events: []wire.Event{{Type: "Normal", Reason: fmt.Sprint("Step", i), Message: "paged"}}}
		must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, rep, nil)
	}
	var first wire.List[wire.Event]
	must(t, 200, "GET", u+"/v1/hosts/h1/events?limit=1", admin, nil, &first)
	n.srv.lists.items.mu.Lock()
	clear(n.srv.lists.items.m)
	n.srv.lists.items.mu.Unlock()
	must(t, 201, "PUT", u+"/v1/credentials/later", admin, wire.Credentials{Username: "a", Password: "p"}, nil)
	d := errBody(t, must(t, 410, "GET", u+"/v1/hosts/h1/events?continue="+url.QueryEscape(first.Continue), admin, nil, nil))
	if !strings.Contains(d.Message, "rackfencectl events h1") {
		t.Errorf("list_expired says %q: want the command that reads the events again", d.Message)
	}
}

func itemNames[T any](items []T, name func(*T) string) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = name(&items[i])
	}
	return out
}
