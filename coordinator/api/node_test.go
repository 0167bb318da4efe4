package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
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

// startNode opens a member with c (coordtest/member; Secrets defaults to
// testSecrets) and serves this package's Server on it, with its Config
// changed by tweak when not nil.
func startNode(t *testing.T, c member.Config, tweak func(*Config)) *node {
	t.Helper()
	if c.Secrets == nil {
		c.Secrets = testSecrets
	}
	m := member.Open(t, c)
	n := &node{t: t, id: m.ID, ip: m.IP, dir: m.Dir, raftAddr: m.RaftAddr, url: m.URL, store: m.Store, m: m}
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
			t.Errorf("answer of %s does not match openapi.yaml: %v", n.id, err)
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
	n := startNode(t, member.Config{ID: "n1", IP: ip, Bootstrap: true}, nil)
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
// nil), returning the status code and the raw body; must also asserts
// the status code; errBody decodes an error answer.
var call, must, errBody = testenv.Call, testenv.Must, testenv.ErrBody

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
