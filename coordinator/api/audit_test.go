package api

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func TestAuditTrail(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: dir, Bootstrap: true}, func(c *Config) { c.AuditMaxBytes = 4096 })
	testenv.Eventually(t, 30*time.Second, "leader", func() error {
		if !n.store.Ready() {
			return fmt.Errorf("not ready")
		}
		return nil
	})
	admin, u := adminTokenOf(t, n), n.url
	var opTok wire.TokenResponse
	must(t, 201, "POST", u+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleOperator, Name: "alice"}, &opTok)
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	viewer := newToken(t, u, admin, wire.RoleViewer, "")
	must(t, 201, "PUT", u+"/v1/hosts/h1", opTok.Token, testHost("h1", "r1"), nil)
	must(t, 201, "PUT", u+"/v1/credentials/c1", admin, wire.Credentials{Username: "root", Password: "hunter2-secret"}, nil)
	must(t, 200, "GET", u+"/v1/credentials/c1?reveal=true", agent, nil, nil)
	must(t, 200, "GET", u+"/v1/hosts/h1", viewer, nil, nil) // a read: not recorded
	must(t, 403, "POST", u+"/v1/hosts/h1/intents/detach", viewer, wire.IntentRequest{Reason: "x"}, nil)
	must(t, 200, "DELETE", u+"/v1/tokens/"+opTok.ID, admin, nil, nil)
	// The agent's heartbeat (renewals, status reports granted) is left out;
	// its acquire and a refused renewal are recorded.
	var l0 wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", TTL: wire.Duration(time.Minute)}, &l0)
	must(t, 200, "PUT", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", Epoch: l0.Epoch, TTL: wire.Duration(time.Minute)}, nil)
	must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, wire.StatusReport{Epoch: l0.Epoch, Status: wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK}}, nil)
	must(t, 200, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l0.Epoch, Hosts: []wire.RackHostReport{{Name: "h1", Status: &wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK}}}}, nil)
	must(t, 409, "PUT", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", Epoch: l0.Epoch + 1, TTL: wire.Duration(time.Minute)}, nil)

	var l wire.List[wire.AuditRecord]
	must(t, 200, "GET", u+"/v1/audit", admin, nil, &l)
	var got []string
	for _, r := range l.Items {
		if r.Member != "n1" || r.Time.IsZero() || r.Remote != "127.0.0.1" {
			t.Errorf("record %+v", r)
		}
		got = append(got, fmt.Sprintf("%s %s [%s] %s/%s %d", r.Method, r.Route, r.Target, r.Actor, r.Role, r.Code))
	}
	want := []string{
		"POST /v1/tokens [id=" + opTok.ID + "] admin/admin 201",
		"PUT /v1/hosts/:name [name=h1] alice/operator 201",
		"PUT /v1/credentials/:name [name=c1] admin/admin 201",
		"GET /v1/credentials/:name [name=c1] agent-",
		"POST /v1/hosts/:name/intents/:kind [name=h1 kind=detach] viewer-",
		"DELETE /v1/tokens/:id [id=" + opTok.ID + "] admin/admin 200",
		"POST /v1/racks/:rack/lease [rack=r1] agent-",
		"PUT /v1/racks/:rack/lease [rack=r1] agent-",
	}
	for _, g := range got {
		if strings.Contains(g, "/status") || (strings.HasPrefix(g, "PUT /v1/racks/:rack/lease") && !strings.HasSuffix(g, " 409")) {
			t.Errorf("an agent's heartbeat is in the audit trail: %s", g)
		}
	}
	// Tokens created before the host are recorded too; match in order.
	i := 0
	for _, g := range got {
		if i < len(want) && strings.HasPrefix(g, want[i]) {
			i++
		}
	}
	if i != len(want) {
		t.Fatalf("audit trail misses %q\ngot:\n%s", want[i], strings.Join(got, "\n"))
	}
	must(t, 403, "GET", u+"/v1/audit", viewer, nil, nil)
	if d := errBody(t, must(t, 400, "GET", u+"/v1/audit?limit=0", admin, nil, nil)); d.Field != "limit" {
		t.Fatal(d)
	}

	// The file: 0600, no password or token in it; rotated within bounds
	// and read across the rotation.
	path := filepath.Join(dir, "audit.log")
	for i := 0; i < 60; i++ {
		must(t, 200, "PUT", u+"/v1/hosts/h1", admin, testHost("h1", "r1"), nil)
	}
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 || st.Size() > 4096 {
			t.Fatalf("%s: mode %v size %d", p, st.Mode().Perm(), st.Size())
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), admin) || strings.Contains(string(b), agent) {
			t.Fatalf("%s holds a secret", p)
		}
	}
	var l2 wire.List[wire.AuditRecord]
	must(t, 200, "GET", u+"/v1/audit?limit=25", admin, nil, &l2)
	if len(l2.Items) != 25 || l2.Items[24].Route != "/v1/hosts/:name" {
		t.Fatalf("tail across rotation: %d records", len(l2.Items))
	}
}
