package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/coordtest/member"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
)

// node is one in-process coordinator member over real TCP (its Raft
// transport and its HTTP API listen on ip), opened by coordtest/member
// (the starter coordtest is built on; this package cannot import
// coordtest, which imports it) and serving this package's Server.
type node struct {
	t        *testing.T
	id, ip   string
	dir      string
	raftAddr string
	url      string
	store    *coordinator.Store
	srv      *Server
	m        *member.Member
	// rec keeps every answer; a cleanup checks them against openapi.yaml.
	rec *recorder
}

func startNode(t *testing.T, id, ip, dir string, bootstrap bool, raftPort, httpPort int) *node {
	t.Helper()
	return startNodeWith(t, id, ip, dir, bootstrap, raftPort, httpPort, nil)
}

func startNodeWith(t *testing.T, id, ip, dir string, bootstrap bool, raftPort, httpPort int, tweak func(*Config)) *node {
	t.Helper()
	return startNodeCfg(t, id, ip, dir, bootstrap, raftPort, httpPort, nil, tweak)
}

// startNodeCfg is startNodeWith that may also change the store's Config.
func startNodeCfg(t *testing.T, id, ip, dir string, bootstrap bool, raftPort, httpPort int, tweakStore func(*coordinator.Config), tweak func(*Config)) *node {
	t.Helper()
	m := member.Open(t, member.Config{ID: id, IP: ip, Dir: dir, Bootstrap: bootstrap, RaftPort: raftPort, HTTPPort: httpPort,
		Secrets: testSecrets, Store: tweakStore})
	n := &node{t: t, id: id, ip: ip, dir: dir, raftAddr: m.RaftAddr, url: m.URL, store: m.Store, m: m}
	cfg := Config{Store: m.Store, State: m.Store.FSM(), Tier: "test", Logger: m.Logger, WatchTimeout: 30 * time.Second, Registry: m.Registry}
	if tweak != nil {
		tweak(&cfg)
	}
	n.srv = New(cfg)
	n.rec = &recorder{next: n.srv.Handler()}
	m.Serve(n.rec, func() { n.srv.Close() })
	// Stops the node first, so every answer is in when they are checked.
	t.Cleanup(func() {
		n.stop()
		_, errs := n.rec.check(loadSpec(t))
		for _, err := range errs {
			t.Errorf("answer of %s does not match openapi.yaml: %v", id, err)
		}
	})
	return n
}

// testSecrets is the secrets keyring every in-process member shares (as
// members of a real cluster share one key file).
var testSecrets = func() *seal.Holder {
	k, err := seal.Generate()
	if err != nil {
		panic(err)
	}
	h := &seal.Holder{Path: "(test keyring)"}
	h.Set(k)
	return h
}()

// stop closes the node; its store is nil from then on (leaderOf skips it).
func (n *node) stop() {
	n.m.Close()
	n.store = nil
}

// startLeader bootstraps a one-node cluster and waits until it serves.
func startLeader(t *testing.T, ip string) (*node, string) {
	t.Helper()
	n := startNode(t, "n1", ip, t.TempDir(), true, 0, 0)
	n.m.WaitLeader(t)
	return n, adminTokenOf(t, n)
}

// adminTokenOf reads the bootstrap admin token of n.
func adminTokenOf(t *testing.T, n *node) string {
	t.Helper()
	return n.m.AdminToken(t)
}

var client = &http.Client{Timeout: 60 * time.Second}

// call sends a JSON request and decodes a JSON answer into out (when not
// nil); it returns the status code and the raw body.
func call(t testing.TB, method, url, token string, body, out any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, url, raw, err)
		}
	}
	return resp.StatusCode, raw
}

// must asserts the status code.
func must(t testing.TB, want int, method, url, token string, body, out any) []byte {
	t.Helper()
	code, raw := call(t, method, url, token, body, out)
	if code != want {
		t.Fatalf("%s %s: want %d, got %d: %s", method, url, want, code, raw)
	}
	return raw
}

func errBody(t testing.TB, raw []byte) wire.ErrorDetail {
	t.Helper()
	var eb wire.ErrorBody
	if err := json.Unmarshal(raw, &eb); err != nil || eb.Error.Code == "" {
		t.Fatalf("not an error body: %s", raw)
	}
	return eb.Error
}

func newToken(t testing.TB, url, admin, role, rack string) string {
	t.Helper()
	var tr wire.TokenResponse
	must(t, http.StatusCreated, "POST", url+"/v1/tokens", admin, wire.TokenRequest{Role: role, Rack: rack}, &tr)
	return tr.Token
}

func testHost(name, rack string) wire.Host {
	return wire.Host{Name: name, Rack: rack, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9001/redfish/v1/Systems/1", Credentials: "c1"},
		BootMACAddress: "52:54:00:00:01:07", Online: true}
}
