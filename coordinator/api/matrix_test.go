package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// The role × route matrix. Every route echo serves must have an entry in
// routeMatrix (a new route without one fails the test), and every entry
// says, for each role, whether the request is allowed (anything but 401
// and 403) or refused with exactly 401 or 403.
//
// Targets are rack r1's (host h1, credentials c1): agent-r2 is then the
// other rack's agent on every route, including hosts, leases, watch,
// status writes and the credentials reveal.

// matrixRoles, in the order of the expectation strings.
var matrixRoles = []string{"none", "garbage", "viewer", "operator", "admin", "agent-r1", "agent-r2"}

// probe is one concrete request for a route and its expected outcome per
// role: A allowed, U 401, F 403.
type probe struct {
	target string // path and query
	body   any
	want   string
}

var okReport = wire.StatusReport{Epoch: 1, Status: wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK}}

var okTask = wire.BMCTaskRequest{Epoch: 1, CreatedIndex: 1, Kind: wire.BMCTaskBIOS, TaskURI: "/redfish/v1/TaskService/Tasks/1"}

var routeMatrix = map[string][]probe{
	"GET /v1/health":       {{"/v1/health", nil, "AAAAAAA"}},
	"GET /v1/openapi.json": {{"/v1/openapi.json", nil, "AAAAAAA"}},
	"GET /metrics":         {{"/metrics", nil, "AAAAAAA"}},
	// The dashboard's static files carry no secret; the API calls the page
	// makes carry the token the user enters.
	"GET /ui":   {{"/ui", nil, "AAAAAAA"}},
	"GET /ui/*": {{"/ui/", nil, "AAAAAAA"}},

	"GET /v1/status":            {{"/v1/status", nil, "UUAAAAA"}},
	"GET /v1/cluster/members":   {{"/v1/cluster/members", nil, "UUAAAFF"}},
	"GET /v1/audit":             {{"/v1/audit", nil, "UUFFAFF"}},
	"GET /v1/whoami":            {{"/v1/whoami", nil, "UUAAAAA"}},
	"POST /v1/cluster/snapshot": {{"/v1/cluster/snapshot", nil, "UUFFAFF"}},
	"GET /v1/cluster/snapshot":  {{"/v1/cluster/snapshot", nil, "UUFFAFF"}},

	"GET /v1/hosts": {
		{"/v1/hosts?rack=r1", nil, "UUAAAAF"},
		{"/v1/hosts", nil, "UUAAAAA"}, // an agent without ?rack= gets its own rack
	},
	"GET /v1/hosts/:name":    {{"/v1/hosts/h1", nil, "UUAAAAF"}},
	"PUT /v1/hosts/:name":    {{"/v1/hosts/h1", hostBody("h1", "r1"), "UUFAAFF"}},
	"DELETE /v1/hosts/:name": {{"/v1/hosts/h1", nil, "UUFAAFF"}},
	"POST /v1/hosts/:name/intents/:kind": {
		{"/v1/hosts/h1/intents/detach", wire.IntentRequest{Reason: "matrix"}, "UUFAAFF"},
		{"/v1/hosts/h1/intents/service", wire.IntentRequest{Reason: "matrix"}, "UUFAAFF"},
	},
	"DELETE /v1/hosts/:name/intents/:kind": {
		{"/v1/hosts/h1/intents/detach", nil, "UUFAAFF"},
		{"/v1/hosts/h1/intents/service", nil, "UUFAAFF"},
	},
	"DELETE /v1/hosts/:name/intents/:kind/:requester": {{"/v1/hosts/h1/intents/reboot/k1", nil, "UUFAAFF"}},
	"GET /v1/hosts/:name/events":                      {{"/v1/hosts/h1/events", nil, "UUAAAAF"}},
	"PUT /v1/hosts/:name/status":                      {{"/v1/hosts/h1/status", okReport, "UUFFAAF"}},
	"POST /v1/hosts/:name/task":                       {{"/v1/hosts/h1/task", okTask, "UUFFAAF"}},
	"DELETE /v1/hosts/:name/task":                     {{"/v1/hosts/h1/task", wire.BMCTaskEnd{Epoch: 1, Outcome: wire.BMCTaskSucceeded}, "UUFFAAF"}},
	"GET /v1/hosts/:name/bmc-account": {
		{"/v1/hosts/h1/bmc-account", nil, "UUAAAAF"},
		{"/v1/hosts/h1/bmc-account?reveal=true", nil, "UUFFAAF"}, // an admin, or the rack's agent (which must name its epoch)
	},
	"PUT /v1/hosts/:name/bmc-account":           {{"/v1/hosts/h1/bmc-account", wire.BMCAccountWrite{Epoch: 1, Op: wire.BMCAccountOpConfirm}, "UUFFFAF"}},
	"POST /v1/hosts/:name/bmc-account/rotation": {{"/v1/hosts/h1/bmc-account/rotation", wire.BMCAccountRotationRequest{}, "UUFAAFF"}},
	"POST /v1/hosts/:name/pivot":                {{"/v1/hosts/h1/pivot", map[string]string{"to": "elsewhere"}, "UUFAAFF"}},
	"GET /v1/credentials":                       {{"/v1/credentials", nil, "UUAAAFF"}},
	"PUT /v1/credentials/:name":                 {{"/v1/credentials/c1", wire.Credentials{Username: "u", Password: "p"}, "UUFFAFF"}},
	"GET /v1/credentials/:name": {
		{"/v1/credentials/c1", nil, "UUAAAAA"},             // no password: any token
		{"/v1/credentials/c1?reveal=true", nil, "UUFFAAF"}, // an admin, or the agent of a rack using them
	},
	"POST /v1/tokens":       {{"/v1/tokens", wire.TokenRequest{Role: wire.RoleViewer}, "UUFFAFF"}},
	"GET /v1/tokens":        {{"/v1/tokens", nil, "UUFFAFF"}},
	"DELETE /v1/tokens/:id": {{"/v1/tokens/0123456789abcdef", nil, "UUFFAFF"}},
	// The matrix member runs without TLS, so it has no CA and
	// issueCertificate answers 409 "no CA" to every caller that passes
	// authentication, before it looks at roles (allowedStatus pins the
	// 409). The TLS rules — an agent token needs the agent's client
	// certificate, kind member needs admin, kind agent needs an agent
	// token — are covered by the process-level TLS tests and by
	// TestOpenAPIResponses' member with a CA.
	"POST /v1/certificates": {{"/v1/certificates", wire.CertificateRequest{Kind: wire.CertKindAgent, ID: "matrix", CSR: "x"}, "UUAAAAA"}},

	"GET /v1/secrets":            {{"/v1/secrets", nil, "UUFFAFF"}},
	"POST /v1/secrets/reencrypt": {{"/v1/secrets/reencrypt", nil, "UUFFAFF"}},

	"GET /v1/racks":                {{"/v1/racks", nil, "UUAAAFF"}},
	"GET /v1/racks/:rack/lease":    {{"/v1/racks/r1/lease", nil, "UUAAAAF"}},
	"POST /v1/racks/:rack/lease":   {{"/v1/racks/r1/lease", wire.LeaseRequest{Holder: "matrix", TTL: wire.Duration(time.Minute)}, "UUFFAAF"}},
	"PUT /v1/racks/:rack/lease":    {{"/v1/racks/r1/lease", wire.LeaseRequest{Holder: "matrix", Epoch: 1}, "UUFFAAF"}},
	"DELETE /v1/racks/:rack/lease": {{"/v1/racks/r1/lease", wire.LeaseRequest{Holder: "nobody", Epoch: 1}, "UUFFAAF"}},
	"GET /v1/racks/:rack/leases":   {{"/v1/racks/r1/leases", nil, "UUAAAAF"}},
	"POST /v1/racks/:rack/status": {{"/v1/racks/r1/status", wire.RackStatusReport{Epoch: 1,
		Hosts: []wire.RackHostReport{{Name: "h1", Touch: 1}}}, "UUFFAAF"}},
	"GET /v1/watch": {{"/v1/watch?rack=r1&index=0", nil, "UUAAAAF"}},

	"POST /v1/cluster/join":          {{"/v1/cluster/join", map[string]string{}, "UUFFAFF"}},
	"DELETE /v1/cluster/members/:id": {{"/v1/cluster/members/nobody", nil, "UUFFAFF"}},
}

// allowedStatus pins the exact status of the allowed cells of a route
// where "allowed" has only one honest answer on the matrix member.
var allowedStatus = map[string]int{
	"POST /v1/certificates": http.StatusConflict, // no CA without TLS
}

func hostBody(name, rack string) wire.Host { return testHost(name, rack) }

// roleClient is how one role calls the API.
type roleClient struct {
	role  string
	hc    *http.Client
	token string
}

// matrixClients builds, for every role, the HTTP client and the token it
// calls with. All transport and credential setup of the matrix is here.
func matrixClients(t *testing.T, n *node, admin string) []roleClient {
	t.Helper()
	hc := &http.Client{Timeout: 60 * time.Second}
	tok := map[string]string{
		"none":     "",
		"garbage":  strings.Repeat("0", 64),
		"viewer":   newToken(t, n.url, admin, wire.RoleViewer, ""),
		"operator": newToken(t, n.url, admin, wire.RoleOperator, ""),
		"admin":    admin,
		"agent-r1": newToken(t, n.url, admin, wire.RoleAgent, "r1"),
		"agent-r2": newToken(t, n.url, admin, wire.RoleAgent, "r2"),
	}
	out := make([]roleClient, 0, len(matrixRoles))
	for _, r := range matrixRoles {
		out = append(out, roleClient{role: r, hc: hc, token: tok[r]})
	}
	return out
}

func (rc roleClient) do(t *testing.T, method, url string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rc.token != "" {
		req.Header.Set("Authorization", "Bearer "+rc.token)
	}
	resp, err := rc.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", method, url, rc.role, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

func outcome(code int) byte {
	switch code {
	case http.StatusUnauthorized:
		return 'U'
	case http.StatusForbidden:
		return 'F'
	}
	return 'A'
}

func TestRoleRouteMatrix(t *testing.T) {
	n := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: t.TempDir(), Bootstrap: true}, func(c *Config) { c.AuthFailLimit = -1 })
	testenv.Eventually(t, 30*time.Second, "leader", func() error {
		if !n.store.Ready() {
			return fmt.Errorf("not ready")
		}
		return nil
	})
	admin := adminTokenOf(t, n)
	clients := matrixClients(t, n, admin)
	fixture := func() {
		must(t, 200, "PUT", n.url+"/v1/credentials/c1", admin, wire.Credentials{Username: "u", Password: "p"}, nil)
		must(t, 200, "PUT", n.url+"/v1/credentials/c2", admin, wire.Credentials{Username: "u", Password: "p"}, nil)
		for _, h := range []wire.Host{testHost("h1", "r1"), testHost("h2", "r2")} {
			if h.Rack == "r2" {
				h.BMC.Credentials = "c2"
			}
			if code, raw := call(t, "PUT", n.url+"/v1/hosts/"+h.Name, admin, h, nil); code != 200 && code != 201 {
				t.Fatalf("fixture host %s: %d %s", h.Name, code, raw)
			}
		}
	}
	// The first fixture creates what later ones only refresh.
	call(t, "PUT", n.url+"/v1/credentials/c1", admin, wire.Credentials{Username: "u", Password: "p"}, nil)
	call(t, "PUT", n.url+"/v1/credentials/c2", admin, wire.Credentials{Username: "u", Password: "p"}, nil)

	var routes []string
	seen := map[string]bool{}
	for _, r := range n.srv.echo.Routes() {
		if r.Method == echoRouteNotFound {
			continue
		}
		key := r.Method + " " + r.Path
		if !seen[key] {
			seen[key] = true
			routes = append(routes, key)
		}
	}
	sort.Strings(routes)
	var missing []string
	for _, key := range routes {
		if _, ok := routeMatrix[key]; !ok {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		t.Errorf("routes without an entry in routeMatrix (say which roles may call them): %s", strings.Join(missing, ", "))
	}
	for key := range routeMatrix {
		if !seen[key] {
			t.Errorf("routeMatrix has %s, which the server does not serve: remove it", key)
		}
	}

	cells, requests, mismatches := 0, 0, 0
	for _, key := range routes {
		method := strings.Fields(key)[0]
		for _, p := range routeMatrix[key] {
			if len(p.want) != len(matrixRoles) {
				t.Fatalf("%s %s: expectation %q must have one letter per role (%d)", key, p.target, p.want, len(matrixRoles))
			}
			for i, rc := range clients {
				fixture()
				code, body := rc.do(t, method, n.url+p.target, p.body)
				if testing.Verbose() {
					t.Logf("%-40s %-8s %d", method+" "+p.target, rc.role, code)
				}
				requests++
				if got := outcome(code); got != p.want[i] {
					mismatches++
					t.Errorf("%s %s as %s: got %d (%c), want %c: %s", method, p.target, rc.role, code, got, p.want[i], body)
				} else if want, ok := allowedStatus[key]; ok && got == 'A' && code != want {
					mismatches++
					t.Errorf("%s %s as %s: got %d, want exactly %d: %s", method, p.target, rc.role, code, want, body)
				}
			}
		}
		cells += len(clients)
	}
	t.Logf("role matrix: %d routes × %d roles = %d cells checked (%d requests), %d mismatches",
		len(routes), len(matrixRoles), cells, requests, mismatches)
}

// echoRouteNotFound is the method echo lists for a group's catch-all.
const echoRouteNotFound = "echo_route_not_found"
