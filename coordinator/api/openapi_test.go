package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// notAPI reports whether a route serves something other than the JSON
// API and is left out of the document: the web dashboard's files under
// /ui/ (HTML, scripts).
func notAPI(path string) bool {
	return path == "/ui" || strings.HasPrefix(path, "/ui/")
}

// routeOps lists "METHOD /path" for every route the router serves, with
// echo's ":param" written as OpenAPI's "{param}". Group catch-alls that
// only answer 404 (echo's RouteNotFound) are not routes.
func routeOps(s *Server) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range s.echo.Routes() {
		if r.Method == "echo_route_not_found" || notAPI(r.Path) {
			continue
		}
		segs := strings.Split(r.Path, "/")
		for i, seg := range segs {
			if strings.HasPrefix(seg, ":") {
				segs[i] = "{" + seg[1:] + "}"
			}
		}
		k := r.Method + " " + strings.Join(segs, "/")
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestOpenAPIMatchesRoutes fails when a route has no operation in
// openapi.yaml or the document describes one the router does not serve.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	sp := loadSpec(t)
	// The routes are registered by New without touching the store: an
	// empty one (no Raft) and an audit file in a temporary directory do.
	srv := New(Config{Store: &coordinator.Store{}, AuditFile: filepath.Join(t.TempDir(), "audit.log")})
	defer srv.Close()
	routes := routeOps(srv)
	docOps := sp.operations()
	inDoc := map[string]bool{}
	for _, o := range docOps {
		inDoc[o] = true
	}
	inRoutes := map[string]bool{}
	for _, r := range routes {
		inRoutes[r] = true
		if !inDoc[r] {
			t.Errorf("route %s has no operation in coordinator/api/openapi.yaml: add one (see docs/api.md, \"Adding a route\")", r)
		}
	}
	for _, o := range docOps {
		if !inRoutes[o] {
			t.Errorf("openapi.yaml describes %s, which the router does not serve: remove it or add the route", o)
		}
	}
	if len(routes) < 25 {
		t.Errorf("only %d routes found; the route listing is broken: %v", len(routes), routes)
	}
	// Every operation has an ID, an auth note and documented answers.
	for p, v := range sp.doc["paths"].(map[string]any) {
		for m, o := range v.(map[string]any) {
			op, ok := o.(map[string]any)
			if !ok || m == "parameters" {
				continue
			}
			for _, k := range []string{"operationId", "summary", "x-rackfence-auth", "responses"} {
				if _, ok := op[k]; !ok {
					t.Errorf("%s %s has no %s", strings.ToUpper(m), p, k)
				}
			}
		}
	}
}

// TestOpenAPISchemasCompile compiles every schema of the document (a
// broken $ref or keyword fails here, not only when an answer needs it).
func TestOpenAPISchemasCompile(t *testing.T) {
	sp := loadSpec(t)
	for name := range sp.doc["components"].(map[string]any)["schemas"].(map[string]any) {
		if _, err := sp.schemaAt("/components/schemas/" + pointer(name)); err != nil {
			t.Errorf("schema %s: %v", name, err)
		}
	}
}

// TestSpecCheckRejects shows the answer check can fail: bodies that break
// their schema and undocumented statuses are reported.
func TestSpecCheckRejects(t *testing.T) {
	sp := loadSpec(t)
	good := `{"name":"h1","rack":"r1","bmc":{},"online":true,"consumer":""}`
	if _, err := sp.checkResponse("GET", "/v1/hosts/h1", 200, "application/json; charset=UTF-8", []byte(good)); err != nil {
		t.Fatalf("a valid host is refused: %v", err)
	}
	bad := []struct {
		method, path string
		status       int
		ctype, body  string
	}{
		{"GET", "/v1/hosts/h1", 200, "application/json", `{"name":"h1","rack":"r1","bmc":{},"online":true,"consumer":"","surprise":1}`},
		{"GET", "/v1/hosts/h1", 200, "application/json", `{"name":"h1","bmc":{},"online":true,"consumer":""}`},
		{"GET", "/v1/hosts/h1", 200, "application/json", `{"name":"H1","rack":"r1","bmc":{},"online":true,"consumer":""}`},
		{"GET", "/v1/hosts/h1", 200, "application/json", `{"name":"h1","rack":"r1","bmc":{},"online":true,"consumer":"","status":{"provisioningState":"flying","operationalStatus":"ok","errorCount":0,"poweredOn":false,"lastUpdated":"2026-01-01T00:00:00Z","epoch":1}}`},
		{"GET", "/v1/hosts/h1", 200, "application/json", `{"name":"h1","rack":"r1","bmc":{},"online":true,"consumer":"","status":{"provisioningState":"","operationalStatus":"ok","errorCount":0,"poweredOn":false,"lastUpdated":"yesterday","epoch":1}}`},
		{"GET", "/v1/hosts/h1", 418, "application/json", `{}`},
		{"GET", "/v1/hosts/h1", 404, "application/json", `{"error":{"code":"nope","message":"x"}}`},
		{"GET", "/v1/hosts/h1", 200, "text/html", good},
		{"PATCH", "/v1/hosts/h1", 200, "application/json", good},
		{"GET", "/v1/nothing", 200, "application/json", `{}`},
		{"GET", "/v1/nothing", 404, "application/json", `{"message":"not the error body"}`},
	}
	for _, b := range bad {
		if _, err := sp.checkResponse(b.method, b.path, b.status, b.ctype, []byte(b.body)); err == nil {
			t.Errorf("%s %s %d %s was accepted: %s", b.method, b.path, b.status, b.ctype, b.body)
		}
	}
	// Request bodies the server accepted are checked too.
	if err := sp.checkRequest("PUT", "/v1/hosts/h1", []byte(`{"rack":"r1","online":true}`)); err != nil {
		t.Errorf("a valid PUT body is refused: %v", err)
	}
	if err := sp.checkRequest("POST", "/v1/hosts/h1/intents/resume", nil); err != nil {
		t.Errorf("an intent without body (optional) is refused: %v", err)
	}
	for _, r := range []struct{ method, path, body string }{
		{"PUT", "/v1/hosts/h1", `{"rack":"r1","flavour":"x"}`},
		{"POST", "/v1/racks/r1/lease", ``},
		{"POST", "/v1/racks/r1/lease", `{"ttl":"10s"}`},
		{"POST", "/v1/hosts/h1/intents/drain", `{"mode":"sideways"}`},
	} {
		if err := sp.checkRequest(r.method, r.path, []byte(r.body)); err == nil {
			t.Errorf("request %s %s %q was accepted", r.method, r.path, r.body)
		}
	}
}

// TestOpenAPIResponses drives every operation a single member can answer
// against a real in-process coordinator (Raft, FSM, HTTP) and checks that
// each gave at least one 2xx answer matching its schema; error answers
// are checked too. Join, member removal and pivots need more members or a
// second tier: cluster_test.go and pivot_test.go drive them, and their
// answers are checked by the same recorder (node_test.go).
func TestOpenAPIResponses(t *testing.T) {
	testenv.SkipShort(t) // drives most of the API against Raft: seconds, not the fast layer
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	viewer := newToken(t, u, admin, wire.RoleViewer, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")

	must(t, 200, "GET", u+"/v1/health", "", nil, nil)
	must(t, 200, "GET", u+"/metrics", "", nil, nil)
	raw := must(t, 200, "GET", u+"/v1/openapi.json", "", nil, nil)
	if !bytes.Equal(raw, OpenAPIJSON) {
		t.Fatal("/v1/openapi.json is not the embedded document")
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("/v1/openapi.json: %v %v", err, doc["openapi"])
	}
	var ps wire.ClusterStatus
	must(t, 200, "GET", u+"/v1/status", viewer, nil, &ps)
	if ps.TLS.Enabled || len(ps.Warnings) == 0 || !strings.HasPrefix(ps.Warnings[0], "insecure-plaintext") {
		t.Errorf("status of a member without TLS must warn: %+v %q", ps.TLS, ps.Warnings)
	}
	must(t, 200, "GET", u+"/v1/whoami", agent, nil, nil)
	must(t, 200, "GET", u+"/v1/cluster/members", viewer, nil, nil)
	must(t, 404, "DELETE", u+"/v1/cluster/members/nobody", admin, nil, nil)
	must(t, 400, "POST", u+"/v1/cluster/join", admin, wire.JoinRequest{ID: "n9"}, nil)

	must(t, 201, "PUT", u+"/v1/credentials/c1", admin, wire.Credentials{Username: "admin", Password: "password"}, nil)
	must(t, 200, "PUT", u+"/v1/credentials/c1", admin, wire.Credentials{Username: "admin", Password: "password"}, nil)
	must(t, 200, "GET", u+"/v1/credentials", viewer, nil, nil)
	must(t, 200, "GET", u+"/v1/credentials/c1", viewer, nil, nil)
	must(t, 200, "GET", u+"/v1/secrets", admin, nil, nil)
	must(t, 200, "POST", u+"/v1/secrets/reencrypt", admin, nil, nil)

	h := testHost("h1", "r1")
	h.Labels = map[string]string{"role": "compute", "example.com/zone": "a"}
	h.Image = &wire.Image{URL: "http://images/os.qcow2", Checksum: "sha256:00"}
	must(t, 201, "PUT", u+"/v1/hosts/h1", op, h, nil)
	must(t, 200, "PUT", u+"/v1/hosts/h1", op, h, nil)
	must(t, 201, "PUT", u+"/v1/hosts/h2", op, testHost("h2", "r1"), nil)
	must(t, 200, "GET", u+"/v1/credentials/c1?reveal=true", agent, nil, nil)
	must(t, 200, "GET", u+"/v1/hosts?rack=r1&state=none", viewer, nil, nil)
	must(t, 200, "GET", u+"/v1/hosts?selector=role%3Dcompute,zone", viewer, nil, nil)
	must(t, 400, "GET", u+"/v1/hosts?selector=in%20(", viewer, nil, nil)
	must(t, 200, "GET", u+"/v1/hosts?stale=true", viewer, nil, nil)
	must(t, 400, "GET", u+"/v1/hosts?state=flying", viewer, nil, nil)
	must(t, 200, "GET", u+"/v1/hosts/h1", agent, nil, nil)
	must(t, 404, "GET", u+"/v1/hosts/nope", viewer, nil, nil)
	must(t, 401, "GET", u+"/v1/hosts/h1", "", nil, nil)
	must(t, 404, "PATCH", u+"/v1/hosts/h1", op, nil, nil)
	must(t, 404, "GET", u+"/v1/nothing", op, nil, nil)

	var det wire.Intent
	must(t, 200, "POST", u+"/v1/hosts/h1/intents/detach", op, wire.IntentRequest{Reason: "test"}, &det)
	must(t, 200, "POST", u+"/v1/hosts/h1/intents/drain", op, wire.IntentRequest{Mode: wire.DrainMaintenance}, nil)
	must(t, 200, "DELETE", u+"/v1/hosts/h1/intents/drain", op, nil, nil)

	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", TTL: wire.Duration(30 * time.Second)}, &l)
	must(t, 409, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a2"}, nil)
	must(t, 200, "PUT", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", Epoch: l.Epoch}, nil)
	must(t, 200, "GET", u+"/v1/racks/r1/lease", viewer, nil, nil)
	rep := wire.StatusReport{Epoch: l.Epoch,
		Status: wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpDetached, PoweredOn: true,
			Extra: map[string]string{"k": "v"},
			HardwareDetails: &wire.HardwareDetails{Manufacturer: "m", CPUs: []wire.CPU{{Model: "x", Cores: 8}},
				NICs: []wire.NIC{{Name: "eth0", MAC: "52:54:00:00:01:07"}}, Disks: []wire.Disk{{Name: "sda", SizeBytes: 1 << 30}},
				Firmware: []wire.Firmware{{Name: "bios", Version: "1"}}}},
		Acks:   []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: det.CreatedIndex}},
		Events: []wire.Event{{Type: wire.EventNormal, Reason: "Detached", Message: "detached"}}}
	must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, rep, nil)
	stale := rep
	stale.Epoch = l.Epoch + 100
	must(t, 409, "PUT", u+"/v1/hosts/h1/status", agent, stale, nil)
	var rs wire.RackStatusResult
	must(t, 200, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l.Epoch,
		Hosts: []wire.RackHostReport{{Name: "h1", Status: &rep.Status}, {Name: "nope", Touch: 1}}}, &rs)
	must(t, 200, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l.Epoch,
		Hosts: []wire.RackHostReport{{Name: "h1", Touch: rs.Hosts[0].ModifiedIndex}}}, nil)
	must(t, 409, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: stale.Epoch,
		Hosts: []wire.RackHostReport{{Name: "h1", Touch: rs.Hosts[0].ModifiedIndex}}}, nil)
	var hh wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", viewer, nil, &hh)
	must(t, 200, "POST", u+"/v1/hosts/h1/task", agent, wire.BMCTaskRequest{Epoch: l.Epoch, CreatedIndex: hh.CreatedIndex,
		Kind: wire.BMCTaskFirmware, TaskURI: "/redfish/v1/TaskService/Tasks/1", Component: "bmc"}, nil)
	must(t, 409, "POST", u+"/v1/hosts/h1/intents/drain", op, wire.IntentRequest{Mode: wire.DrainMaintenance}, nil)
	must(t, 400, "POST", u+"/v1/hosts/h1/task", agent, wire.BMCTaskRequest{Epoch: l.Epoch}, nil)
	must(t, 200, "DELETE", u+"/v1/hosts/h1/task", agent, wire.BMCTaskEnd{Epoch: l.Epoch, Outcome: wire.BMCTaskSucceeded}, nil)
	must(t, 404, "DELETE", u+"/v1/hosts/h1/task", agent, wire.BMCTaskEnd{Epoch: l.Epoch, Outcome: wire.BMCTaskSucceeded}, nil)
	// The tier's BMC account: the holder records a pending password,
	// reveals it under its epoch only, confirms it; no GET or list shows it.
	must(t, 404, "GET", u+"/v1/hosts/h1/bmc-account", viewer, nil, nil)
	must(t, 400, "PUT", u+"/v1/hosts/h1/bmc-account", agent, wire.BMCAccountWrite{Epoch: l.Epoch, Op: "rotate"}, nil)
	must(t, 403, "PUT", u+"/v1/hosts/h1/bmc-account", admin, wire.BMCAccountWrite{Epoch: l.Epoch, Op: wire.BMCAccountOpConfirm}, nil)
	must(t, 409, "PUT", u+"/v1/hosts/h1/bmc-account", agent, wire.BMCAccountWrite{Epoch: stale.Epoch, Op: wire.BMCAccountOpPending, Username: "rackfence", Password: "Api-pass-1"}, nil)
	must(t, 200, "PUT", u+"/v1/hosts/h1/bmc-account", agent, wire.BMCAccountWrite{Epoch: l.Epoch, Op: wire.BMCAccountOpPending, Username: "rackfence", Password: "Api-pass-1"}, nil)
	var acct wire.BMCAccount
	must(t, 200, "GET", u+"/v1/hosts/h1/bmc-account?reveal=true&epoch="+strconv.FormatUint(l.Epoch, 10), agent, nil, &acct)
	if acct.PendingPassword != "Api-pass-1" || acct.State != wire.BMCAccountPending {
		t.Errorf("revealed BMC account: %v", acct)
	}
	must(t, 409, "GET", u+"/v1/hosts/h1/bmc-account?reveal=true&epoch="+strconv.FormatUint(stale.Epoch, 10), agent, nil, nil)
	must(t, 400, "GET", u+"/v1/hosts/h1/bmc-account?reveal=true", agent, nil, nil)
	must(t, 403, "GET", u+"/v1/hosts/h1/bmc-account?reveal=true", viewer, nil, nil)
	must(t, 200, "PUT", u+"/v1/hosts/h1/bmc-account", agent, wire.BMCAccountWrite{Epoch: l.Epoch, Op: wire.BMCAccountOpConfirm}, nil)
	for _, p := range []string{"/v1/hosts/h1/bmc-account", "/v1/credentials", "/v1/hosts/h1", "/v1/hosts/h1/events"} {
		if b := must(t, 200, "GET", u+p, viewer, nil, nil); bytes.Contains(b, []byte("Api-pass-1")) || bytes.Contains(b, []byte("bmc/h1")) {
			t.Errorf("GET %s shows the BMC account's password or record: %s", p, b)
		}
	}
	must(t, 200, "GET", u+"/v1/hosts/h1/bmc-account?reveal=true", admin, nil, &acct)
	if acct.Password != "Api-pass-1" || acct.State != wire.BMCAccountConfirmed {
		t.Errorf("admin reveal after confirm: %v", acct)
	}
	// On demand: the request waits on the host until the holder answers it.
	must(t, 400, "POST", u+"/v1/hosts/h1/bmc-account/rotation", op, wire.BMCAccountRotationRequest{Reason: strings.Repeat("x", 1025)}, nil)
	must(t, 409, "POST", u+"/v1/hosts/h1/bmc-account/rotation", op, wire.BMCAccountRotationRequest{Reason: "audit"}, nil) // detached
	must(t, 409, "POST", u+"/v1/hosts/h2/bmc-account/rotation", op, nil, nil)                                             // no record
	must(t, 200, "PUT", u+"/v1/hosts/h2/bmc-account", agent, wire.BMCAccountWrite{Epoch: l.Epoch, Op: wire.BMCAccountOpPending, Username: "rackfence", Password: "Api-pass-2"}, nil)
	must(t, 200, "PUT", u+"/v1/hosts/h2/bmc-account", agent, wire.BMCAccountWrite{Epoch: l.Epoch, Op: wire.BMCAccountOpConfirm}, nil)
	must(t, 202, "POST", u+"/v1/hosts/h2/bmc-account/rotation", op, wire.BMCAccountRotationRequest{Reason: "audit"}, nil)
	must(t, 404, "POST", u+"/v1/hosts/nope/bmc-account/rotation", op, nil, nil)
	must(t, 200, "POST", u+"/v1/hosts/h1/intents/resume", op, nil, nil)
	must(t, 200, "GET", u+"/v1/hosts/h1/events", viewer, nil, nil)
	// The fleet as /metrics shows it (deploy/prometheus/ alerts on these).
	metrics := string(must(t, 200, "GET", u+"/metrics", "", nil, nil))
	for _, want := range []string{`rackfence_rack_lease_held{rack="r1"} 1`, `rackfence_rack_hosts{rack="r1"} 2`,
		`rackfence_hosts_operational{status="detached"} 1`, `rackfence_intents_unacknowledged{kind="resume"} 1`,
		`rackfence_intents_unacknowledged{kind="detach"} 0`, `rackfence_pivots_in_flight{side="source"} 0`, `rackfence_lease_expirations_total{rack="r1"} 0`} {
		if !strings.Contains(metrics, "\n"+want+"\n") {
			t.Errorf("/metrics has no line %s", want)
		}
	}
	must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0", agent, nil, nil)
	var racks wire.List[wire.Rack]
	must(t, 200, "GET", u+"/v1/racks", viewer, nil, &racks)
	must(t, 200, "GET", u+"/v1/watch?rack=r1&index="+itoa64(racks.Index+1000)+"&timeout=50ms", viewer, nil, nil)
	must(t, 400, "GET", u+"/v1/watch?rack=r1&index=x", viewer, nil, nil)
	must(t, 200, "GET", u+"/v1/watch?index=0", viewer, nil, nil)
	must(t, 200, "GET", u+"/v1/watch?index=0&brief=true", op, nil, nil)
	must(t, 400, "GET", u+"/v1/watch?index=0", agent, nil, nil) // an agent names its rack
	must(t, 400, "POST", u+"/v1/hosts/h1/pivot", op, wire.PivotRequest{To: "elsewhere"}, nil)
	// Operation intents: refused while detached, then held,
	// re-inspected and released once attached.
	must(t, 409, "POST", u+"/v1/hosts/h1/intents/reboot", op, wire.RebootRequest{Mode: wire.RebootSoft}, nil)
	must(t, 400, "POST", u+"/v1/hosts/h1/intents/reboot", op, wire.RebootRequest{Mode: "gentle"}, nil)
	must(t, 400, "POST", u+"/v1/hosts/h1/intents/reboot", op, wire.RebootRequest{PowerOff: true, Requester: "no/slash"}, nil)
	must(t, 400, "POST", u+"/v1/hosts/h1/intents/inspect", op, wire.IntentRequest{Force: true}, nil)
	must(t, 400, "POST", u+"/v1/hosts/h1/intents/service", op, wire.IntentRequest{Force: true}, nil)
	must(t, 409, "POST", u+"/v1/hosts/h1/intents/service", op, nil, nil) // detached
	must(t, 200, "DELETE", u+"/v1/hosts/h1/intents/detach", op, nil, nil)
	var hold wire.Intent
	must(t, 200, "POST", u+"/v1/hosts/h1/intents/reboot", op, wire.RebootRequest{PowerOff: true, Requester: "k1"}, &hold)
	if hold.Requester != "k1" || hold.Mode != wire.RebootHard {
		t.Errorf("power-off hold %+v, want requester k1, mode hard", hold)
	}
	must(t, 200, "POST", u+"/v1/hosts/h1/intents/reboot", op, nil, nil)
	must(t, 200, "POST", u+"/v1/hosts/h1/intents/inspect", op, wire.IntentRequest{Reason: "new DIMMs"}, nil)
	must(t, 200, "DELETE", u+"/v1/hosts/h1/intents/inspect", op, nil, nil)
	must(t, 200, "DELETE", u+"/v1/hosts/h1/intents/reboot/k1", op, nil, nil)
	must(t, 400, "DELETE", u+"/v1/hosts/h1/intents/drain/k1", op, nil, nil)
	must(t, 403, "POST", u+"/v1/tokens", op, wire.TokenRequest{Role: "viewer"}, nil)
	var short wire.TokenResponse
	must(t, 201, "POST", u+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleOperator, Name: "short", TTL: "1h"}, &short)
	must(t, 200, "GET", u+"/v1/tokens", admin, nil, nil)
	must(t, 200, "DELETE", u+"/v1/tokens/"+short.ID, admin, nil, nil)
	must(t, 404, "DELETE", u+"/v1/tokens/"+short.ID, admin, nil, nil)
	must(t, 400, "DELETE", u+"/v1/tokens/XYZ", admin, nil, nil)
	// Without TLS there is no CA: every authenticated caller gets 409.
	must(t, 409, "POST", u+"/v1/certificates", admin, wire.CertificateRequest{Kind: wire.CertKindMember, ID: "n2", CSR: "x"}, nil)
	must(t, 200, "POST", u+"/v1/cluster/snapshot", admin, nil, nil)
	if raw := must(t, 200, "GET", u+"/v1/cluster/snapshot", admin, nil, nil); !bytes.HasPrefix(raw, []byte("rackfence-backup 1\n")) {
		t.Errorf("GET /v1/cluster/snapshot answered %.60q, want a backup file", raw)
	}
	must(t, 403, "GET", u+"/v1/cluster/snapshot", op, nil, nil)
	must(t, 200, "GET", u+"/v1/audit?limit=5", admin, nil, nil)
	must(t, 400, "GET", u+"/v1/audit?limit=0", admin, nil, nil)
	must(t, 413, "PUT", u+"/v1/hosts/h2", op, `{"rack":"r1","consumer":"`+strings.Repeat("x", 1<<20)+`"}`, nil)

	must(t, 200, "DELETE", u+"/v1/hosts/h2", op, nil, nil)
	must(t, 202, "DELETE", u+"/v1/hosts/h1", op, nil, nil)
	must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, wire.StatusReport{Epoch: l.Epoch, Remove: true}, nil)
	must(t, 200, "DELETE", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", Epoch: l.Epoch}, nil)
	must(t, 200, "GET", u+"/v1/racks/r1/leases", viewer, nil, nil)
	must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0", agent, nil, nil)

	// Certificates need a member holding the CA: a second one-member
	// cluster whose API knows a CA (over plain HTTP here; the process-level
	// tests run the HTTPS listener). Its status reports TLS enabled.
	tn := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: t.TempDir(), Bootstrap: true}, func(c *Config) {
		ca, err := pki.NewCA("rackfence test CA", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		c.TLS = &TLSConfig{CA: ca, SecretsKeys: func() ([]byte, error) { return []byte("# test keyring\n"), nil }}
	})
	testenv.Eventually(t, 30*time.Second, "TLS member ready", func() error {
		if !tn.store.Ready() {
			return fmt.Errorf("state %s", tn.store.State())
		}
		return nil
	})
	tAdmin := adminTokenOf(t, tn)
	var ts wire.ClusterStatus
	must(t, 200, "GET", tn.url+"/v1/status", tAdmin, nil, &ts)
	if !ts.TLS.Enabled || ts.TLS.CAFingerprint == "" || len(ts.Warnings) != 0 {
		t.Errorf("status of a member with a CA: %+v", ts)
	}
	_, csr, err := pki.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	var cr wire.CertificateResponse
	must(t, 201, "POST", tn.url+"/v1/certificates", tAdmin, wire.CertificateRequest{Kind: wire.CertKindMember, ID: "n2", CSR: string(csr), Hosts: []string{"127.0.0.1", "n2.example"}}, &cr)
	if cr.CAKey == "" || cr.SecretsKeys == "" || cr.CAFingerprint != ts.TLS.CAFingerprint {
		t.Errorf("a member certificate comes with the CA key (got %t), the keyring (got %t) and the CA's fingerprint (%q, status says %q)",
			cr.CAKey != "", cr.SecretsKeys != "", cr.CAFingerprint, ts.TLS.CAFingerprint)
	}
	tAgent := newToken(t, tn.url, tAdmin, wire.RoleAgent, "r1")
	must(t, 201, "POST", tn.url+"/v1/certificates", tAgent, wire.CertificateRequest{Kind: wire.CertKindAgent, ID: "a1", CSR: string(csr)}, nil)
	must(t, 403, "POST", tn.url+"/v1/certificates", tAgent, wire.CertificateRequest{Kind: wire.CertKindMember, ID: "n3", CSR: string(csr)}, nil)
	must(t, 400, "POST", tn.url+"/v1/certificates", tAdmin, wire.CertificateRequest{Kind: "robot", ID: "x", CSR: string(csr)}, nil)

	ok2xx, errs := n.rec.check(loadSpec(t))
	tOK, tErrs := tn.rec.check(loadSpec(t))
	for id := range tOK {
		ok2xx[id] = true
	}
	for _, err := range append(errs, tErrs...) {
		t.Error(err)
	}
	elsewhere := map[string]bool{"joinCluster": true, "removeMember": true, "pivotHost": true}
	for _, o := range loadSpec(t).operations() {
		m, p, _ := strings.Cut(o, " ")
		_, opObj, _, _ := loadSpec(t).operation(m, strings.NewReplacer("{", "", "}", "").Replace(p))
		id, _ := opObj["operationId"].(string)
		if !ok2xx[id] && !elsewhere[id] {
			t.Errorf("%s (%s) gave no 2xx answer here: exercise it in TestOpenAPIResponses", o, id)
		}
	}
}
