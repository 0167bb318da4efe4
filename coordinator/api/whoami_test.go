package api

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func TestWhoAmI(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	for _, c := range []struct{ role, rack string }{
		{wire.RoleViewer, ""}, {wire.RoleOperator, ""}, {wire.RoleAgent, "r7"},
	} {
		tok := newToken(t, u, admin, c.role, c.rack)
		var me wire.WhoAmI
		must(t, 200, "GET", u+"/v1/whoami", tok, nil, &me)
		if me.Role != c.role || me.Rack != c.rack || me.Name == "" {
			t.Errorf("whoami for a %s token of rack %q: %+v", c.role, c.rack, me)
		}
	}
	var me wire.WhoAmI
	must(t, 200, "GET", u+"/v1/whoami", admin, nil, &me)
	if me.Role != wire.RoleAdmin {
		t.Errorf("admin token: %+v", me)
	}
	if d := errBody(t, must(t, 401, "GET", u+"/v1/whoami", "", nil, nil)); d.Code != wire.CodeUnauthorized {
		t.Errorf("no token: %+v", d)
	}
	must(t, 401, "GET", u+"/v1/whoami", "not-a-token", nil, nil)
}

// TestFleetWatch follows the watch without ?rack= across racks: the first
// answer has every rack, later ones only what changed, each held lease
// with the leader's time left; agents must name their rack.
func TestFleetWatch(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	viewer := newToken(t, u, admin, wire.RoleViewer, "")
	op := newToken(t, u, admin, wire.RoleOperator, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	must(t, 201, "PUT", u+"/v1/hosts/h1", op, testHost("h1", "r1"), nil)
	must(t, 201, "PUT", u+"/v1/hosts/h2", op, testHost("h2", "r2"), nil)
	must(t, 201, "PUT", u+"/v1/hosts/h3", op, testHost("h3", "r2"), nil)
	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "agent-1", TTL: wire.Duration(time.Minute)}, &l)
	must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{
		ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, Extra: map[string]string{"k": "v"},
		HardwareDetails:  &wire.HardwareDetails{Manufacturer: "Contoso", MemoryMiB: 1024},
		OperationHistory: &wire.OperationHistory{Inspect: wire.OperationMetric{Start: time.Unix(1, 0).UTC(), End: time.Unix(5, 0).UTC()}}}}, nil)

	var all wire.FleetWatchResponse
	must(t, 200, "GET", u+"/v1/watch?index=0", viewer, nil, &all)
	if len(all.Racks) != 2 || all.Racks[0].Rack != "r1" || all.Racks[1].Rack != "r2" {
		t.Fatalf("index 0 answers every rack: %+v", all)
	}
	r1, r2 := all.Racks[0], all.Racks[1]
	if len(r1.Hosts) != 1 || len(r2.Hosts) != 2 || r2.Hosts[0].Name != "h2" || r2.Hosts[1].Name != "h3" {
		t.Fatalf("hosts per rack: %+v", all)
	}
	if r1.Lease == nil || r1.Lease.Holder != "agent-1" || r1.Lease.Epoch != l.Epoch || r1.ExpiresIn == nil {
		t.Fatalf("r1 lease: %+v expiresIn %v", r1.Lease, r1.ExpiresIn)
	}
	if left := r1.ExpiresIn.D(); left <= 0 || left > 2*time.Minute {
		t.Fatalf("r1 time left %s for a 1m lease", left)
	}
	if r2.Lease != nil || r2.ExpiresIn != nil {
		t.Fatalf("r2 is free: %+v", r2)
	}
	if st := r1.Hosts[0].Status; st == nil || st.HardwareDetails == nil || st.Extra["k"] != "v" || st.OperationHistory == nil ||
		st.OperationHistory.Inspect.Duration() != 4*time.Second {
		t.Fatalf("a whole host without brief: %+v", st)
	}

	// brief=true leaves out the inventory and bookkeeping, and only that.
	var brief wire.FleetWatchResponse
	must(t, 200, "GET", u+"/v1/watch?index=0&brief=true", viewer, nil, &brief)
	if st := brief.Racks[0].Hosts[0].Status; st == nil || st.HardwareDetails != nil || st.Extra != nil || st.OperationHistory != nil || st.ProvisioningState != wire.StateAvailable {
		t.Fatalf("brief host status: %+v", st)
	}
	var h1 wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", viewer, nil, &h1)
	if h1.Status == nil || h1.Status.HardwareDetails == nil || h1.Status.HardwareDetails.Manufacturer != "Contoso" || h1.Status.OperationHistory == nil {
		t.Fatalf("a brief watch changed the stored host: %+v", h1.Status)
	}
	if d := errBody(t, must(t, 400, "GET", u+"/v1/watch?index=0&brief=yes", viewer, nil, nil)); d.Field != "brief" {
		t.Fatalf("brief=yes: %+v", d)
	}
	if d := errBody(t, must(t, 400, "GET", u+"/v1/watch?rack=r1&brief=true", viewer, nil, nil)); d.Field != "brief" {
		t.Fatalf("brief with rack: %+v", d)
	}

	// A change on r2 answers r2 only, with only the changed host.
	type answer struct {
		resp wire.FleetWatchResponse
		code int
	}
	got := make(chan answer, 1)
	go func() {
		var a answer
		a.code, _ = call(t, "GET", u+"/v1/watch?index="+itoa64(all.Index), viewer, nil, &a.resp)
		got <- a
	}()
	// The change is made once the watch is parked in the FSM, so it is the
	// change that wakes it.
	testenv.WaitBlocked(t, 30*time.Second, "fsm.(*FSM).WaitFleetChange")
	must(t, 200, "POST", u+"/v1/hosts/h3/intents/detach", op, wire.IntentRequest{Reason: "test"}, nil)
	var a answer
	select {
	case a = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the fleet watch did not answer a change within 30s")
	}
	if a.code != 200 || len(a.resp.Racks) != 1 || a.resp.Racks[0].Rack != "r2" || len(a.resp.Racks[0].Hosts) != 1 ||
		a.resp.Racks[0].Hosts[0].Name != "h3" || a.resp.Racks[0].Hosts[0].Intents == nil || a.resp.Racks[0].Hosts[0].Intents.Detach == nil {
		t.Fatalf("after a detach of h3: %d %+v", a.code, a.resp)
	}
	if a.resp.Index <= all.Index {
		t.Fatalf("index did not move: %d after %d", a.resp.Index, all.Index)
	}

	// A deletion is named in its rack's entry.
	must(t, 200, "DELETE", u+"/v1/hosts/h2", op, nil, nil) // never reported: gone at once
	var after wire.FleetWatchResponse
	must(t, 200, "GET", u+"/v1/watch?index="+itoa64(a.resp.Index)+"&timeout=5s", viewer, nil, &after)
	found := false
	for _, r := range after.Racks {
		found = found || (r.Rack == "r2" && strings.Join(r.Deleted, ",") == "h2")
	}
	if !found {
		t.Fatalf("after deleting h2: %+v", after)
	}

	// Nothing changed: the timeout answers the index and no racks.
	var idle wire.FleetWatchResponse
	must(t, 200, "GET", u+"/v1/watch?index="+itoa64(after.Index)+"&timeout=300ms", viewer, nil, &idle)
	for _, r := range idle.Racks {
		if len(r.Hosts) != 0 || len(r.Deleted) != 0 {
			t.Fatalf("idle watch answered host changes: %+v", idle)
		}
	}

	// An agent must name its own rack.
	if d := errBody(t, must(t, 400, "GET", u+"/v1/watch?index=0", agent, nil, nil)); d.Field != "rack" {
		t.Fatalf("agent fleet watch: %+v", d)
	}
	must(t, 400, "GET", u+"/v1/watch?index=x", viewer, nil, nil)
}

func TestDashboardFiles(t *testing.T) {
	n, _ := startLeader(t, "127.0.0.1")
	for path, want := range map[string]string{"/ui/": "<title>rackfence", "/ui/app.js": "/v1/watch?index=", "/ui/style.css": "#racks"} {
		resp, err := http.Get(n.url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s without a token: %d, want 200 with %q", path, resp.StatusCode, want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(n.url + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}
