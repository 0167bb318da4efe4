package api

import (
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestOtherListsPage: credentials, tokens, a host's events and a rack's
// lease history page with limit and continue at their first page's
// index (writes between pages adding credentials, tokens and events
// change none of them), take no token of another list, and answer list_expired (410) once this member no longer
// keeps the list.
func TestOtherListsPage(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	for i := range 7 {
		must(t, 201, "PUT", fmt.Sprintf("%s/v1/credentials/c%d", u, i), admin, wire.Credentials{Username: "admin", Password: "password"}, nil)
	}
	for range 6 {
		newToken(t, u, admin, wire.RoleViewer, "")
	}
	must(t, 201, "PUT", u+"/v1/hosts/h1", admin, testHost("h1", "r1"), nil)
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	lease := func(holder string) {
		var l wire.Lease
		must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: holder, TTL: wire.Duration(60e9)}, &l)
		must(t, 200, "DELETE", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: holder, Epoch: l.Epoch}, nil)
	}
	for i := range 4 {
		lease(fmt.Sprint("agent-", i))
	}
	var held wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "holder", TTL: wire.Duration(300e9)}, &held)
	event := func(reason string) {
		rep := wire.StatusReport{Epoch: held.Epoch, Status: wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK},
			Events: []wire.Event{{Type: "Normal", Reason: reason, Message: "paged"}}}
		must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, rep, nil)
	}
	for i := range 6 {
		event(fmt.Sprint("Step", i))
	}
	for i, path := range []string{"/v1/credentials", "/v1/tokens", "/v1/hosts/h1/events", "/v1/racks/r1/leases"} {
		t.Run(path, func(t *testing.T) {
			var whole wire.List[map[string]any]
			must(t, 200, "GET", u+path, admin, nil, &whole)
			if len(whole.Items) < 4 || whole.Continue != "" {
				t.Fatalf("unpaged: %d items, continue %q", len(whole.Items), whole.Continue)
			}
			var got []map[string]any
			cont, pages := "", 0
			for {
				q := "?limit=3"
				if cont != "" {
					q += "&continue=" + url.QueryEscape(cont)
				}
				var l wire.List[map[string]any]
				must(t, 200, "GET", u+path+q, admin, nil, &l)
				if l.Index != whole.Index {
					t.Fatalf("page %d at index %d, the list's first at %d", pages, l.Index, whole.Index)
				}
				got = append(got, l.Items...)
				if pages++; pages == 1 {
					// Every list grows by a write between its pages.
					must(t, 201, "PUT", fmt.Sprintf("%s/v1/credentials/later%d", u, i), admin, wire.Credentials{Username: "a", Password: "p"}, nil)
					newToken(t, u, admin, wire.RoleViewer, "")
					event("Later")
				}
				if l.Continue == "" {
					break
				}
				if len(l.Items) != 3 {
					t.Fatalf("a page before the last has %d items, want 3", len(l.Items))
				}
				cont = l.Continue
			}
			if !slices.EqualFunc(got, whole.Items, func(a, b map[string]any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
				t.Fatalf("pages answered %d items %v, the list at their index %d items %v", len(got), got, len(whole.Items), whole.Items)
			}
			var first wire.List[map[string]any]
			must(t, 200, "GET", u+path+"?limit=1", admin, nil, &first)
			if d := errBody(t, must(t, 400, "GET", u+"/v1/hosts?continue="+url.QueryEscape(first.Continue), admin, nil, nil)); d.Field != "continue" {
				t.Fatalf("a %s token on the host list: field %q", path, d.Field)
			}
			n.srv.lists.items.mu.Lock()
			clear(n.srv.lists.items.m)
			n.srv.lists.items.mu.Unlock()
			must(t, 201, "PUT", fmt.Sprintf("%s/v1/credentials/gone%d", u, i), admin, wire.Credentials{Username: "a", Password: "p"}, nil)
			if d := errBody(t, must(t, 410, "GET", u+path+"?continue="+url.QueryEscape(first.Continue), admin, nil, nil)); d.Code != wire.CodeListExpired {
				t.Fatalf("a list no longer kept: code %q", d.Code)
			}
		})
	}
}
