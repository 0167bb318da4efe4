package coordinator_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Members that play an older binary (coordinator.PlayOlderBinary, from
// export_test.go): the version gate and the stop at an entry a member
// cannot apply, seen through the API of an in-process cluster.

// olderStore makes the leader read health every 200ms, compare hashes
// every 500ms and members hash every 8 entries; only, when set, makes the
// member apply only those command types (an older binary).
func olderStore(only map[fsm.CmdType]byte) func(*coordinator.Config) {
	return func(c *coordinator.Config) {
		c.ProbeInterval = 200 * time.Millisecond
		c.HashCheckInterval = 500 * time.Millisecond
		c.HashEvery = 8
		coordinator.PlayOlderBinary(c, only)
	}
}

// gateOptions are the options of every member of the gate's cluster.
func gateOptions(only map[fsm.CmdType]byte) coordtest.Options {
	return coordtest.Options{Tier: "test", WatchTimeout: 30 * time.Second, NoCredentials: true, Store: olderStore(only)}
}

// gateCluster starts n1, the leader of a new cluster, and returns it with
// its admin token.
func gateCluster(t *testing.T) ([]*coordtest.Coordinator, string) {
	t.Helper()
	o := gateOptions(nil)
	o.ID = "n1"
	n1 := coordtest.Start(t, o)
	return []*coordtest.Coordinator{n1}, n1.AdminToken
}

// joinGate starts member id on ip and has the leader add it.
func joinGate(t *testing.T, leader *coordtest.Coordinator, admin, id, ip string, only map[fsm.CmdType]byte) *coordtest.Coordinator {
	t.Helper()
	o := gateOptions(only)
	o.ID, o.IP, o.Join, o.Secrets = id, ip, true, leader.Secrets
	n := coordtest.Start(t, o)
	must(t, 200, "POST", leader.URL+"/v1/cluster/join", admin, wire.JoinRequest{ID: id, RaftAddr: n.RaftAddr, HTTPAddr: n.URL}, nil)
	return n
}

// restartGate stops n and starts it again on the same data dir and ports.
func restartGate(t *testing.T, n *coordtest.Coordinator, only map[fsm.CmdType]byte) *coordtest.Coordinator {
	t.Helper()
	o := gateOptions(only)
	o.Join = true
	return n.Restart(o)
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

// call, must and errBody are the raw HTTP helpers of the API's tests.
var call, must, errBody = testenv.Call, testenv.Must, testenv.ErrBody

func health(t *testing.T, n *coordtest.Coordinator) (int, wire.Health) {
	t.Helper()
	var h wire.Health
	code, raw := call(t, "GET", n.URL+"/v1/health", "", nil, nil)
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Logf("health of %s: %d %s", n.ID, code, raw)
	}
	return code, h
}

func status(t *testing.T, n *coordtest.Coordinator, admin string) wire.ClusterStatus {
	t.Helper()
	var st wire.ClusterStatus
	must(t, 200, "GET", n.URL+"/v1/status", admin, nil, &st)
	return st
}

func testHost(name, rack string) wire.Host {
	return wire.Host{Name: name, Rack: rack, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9001/redfish/v1/Systems/1", Credentials: "c1"},
		BootMACAddress: "52:54:00:00:01:07", Online: true}
}

var availableStatus = &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: true}

// TestMemberStopsAtEntryItCannotApply: a member whose binary does not know
// a command type in the log stops at that entry (health 503 naming it, no
// reads, Raft shut down) while the others go on; restarted on a binary
// that knows it, it applies it and catches up with the same state.
func TestMemberStopsAtEntryItCannotApply(t *testing.T) {
	testenv.SkipShort(t) // a three-member cluster and a restart: seconds
	nodes, admin := gateCluster(t)
	n1 := nodes[0]
	// A type-18 entry (token revocation) in the log before n3 joins.
	var tr wire.TokenResponse
	must(t, http.StatusCreated, "POST", n1.URL+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleViewer}, &tr)
	must(t, 200, "DELETE", n1.URL+"/v1/tokens/"+tr.ID, admin, nil, nil)
	n2 := joinGate(t, n1, admin, "n2", "127.0.0.2", nil)
	n3 := joinGate(t, n1, admin, "n3", "127.0.0.3", coordinator.CommandsWithout(fsm.CmdRevokeToken))

	var h wire.Health
	testenv.Eventually(t, 60*time.Second, "n3 stopped", func() error {
		code, hh := health(t, n3)
		if code != http.StatusServiceUnavailable || hh.Status != "stopped" || hh.Stopped == nil {
			return fmt.Errorf("health %d %+v", code, hh)
		}
		h = hh
		return nil
	})
	want := fmt.Sprintf("log entry %d has command type 18 that this binary does not know: upgrade this member", h.Stopped.Index)
	if h.Stopped.Message != want || h.Stopped.Type != 18 {
		t.Fatalf("stop: %+v, want %q", h.Stopped, want)
	}
	testenv.Eventually(t, 30*time.Second, "n3's raft shut down", func() error {
		if st := n3.Store.State(); st != "shutdown" {
			return fmt.Errorf("state %s", st)
		}
		return nil
	})
	code, raw := call(t, "GET", n3.URL+"/v1/hosts?stale=true", admin, nil, nil)
	if d := errBody(t, raw); code != http.StatusServiceUnavailable || d.Code != wire.CodeMemberStopped || !strings.Contains(d.Message, want) {
		t.Fatalf("stale read on the stopped member: %d %s", code, raw)
	}
	// The others go on; the leader shows n3 stopped.
	for i := 0; i < 5; i++ {
		must(t, 201, "PUT", fmt.Sprintf("%s/v1/hosts/h%d", n2.URL, i), admin, testHost(fmt.Sprintf("h%d", i), "r1"), nil)
	}
	testenv.Eventually(t, 30*time.Second, "the leader shows n3 stopped", func() error {
		for _, m := range status(t, n1, admin).Members {
			if m.ID == "n3" && m.Stopped == want {
				return nil
			}
		}
		return fmt.Errorf("n3 not shown stopped")
	})

	// Upgraded, n3 applies the entry and everything after it.
	n3 = restartGate(t, n3, nil)
	testenv.Eventually(t, 60*time.Second, "n3 caught up", func() error {
		var a, b wire.List[wire.Host]
		must(t, 200, "GET", n1.URL+"/v1/hosts", admin, nil, &a)
		if code, _ := call(t, "GET", n3.URL+"/v1/hosts?stale=true", admin, nil, &b); code != 200 {
			return fmt.Errorf("n3 answers %d", code)
		}
		if len(a.Items) != 5 || len(b.Items) != 5 {
			return fmt.Errorf("hosts: leader %d, n3 %d", len(a.Items), len(b.Items))
		}
		return nil
	})
	if code, hh := health(t, n3); code != 200 || hh.Stopped != nil {
		t.Fatalf("n3 after the upgrade: %d %+v", code, hh)
	}
}

// TestGateRefusesUntilEveryVoterApplies: with a voter whose binary lacks a
// command type, the leader refuses writes of that type (503
// upgrade_required naming the member, Retry-After 30) and nothing else;
// status shows the member lagging; once it is upgraded the write passes.
func TestGateRefusesUntilEveryVoterApplies(t *testing.T) {
	testenv.SkipShort(t) // a three-member cluster and a restart: seconds
	nodes, admin := gateCluster(t)
	n1 := nodes[0]
	joinGate(t, n1, admin, "n2", "127.0.0.2", nil)
	n3 := joinGate(t, n1, admin, "n3", "127.0.0.3", coordinator.CommandsWithout(fsm.CmdRevokeToken))
	testenv.Eventually(t, 30*time.Second, "n3 recorded as lagging", func() error {
		up := status(t, n1, admin).Upgrade
		if up == nil || len(up.Lagging) != 1 || up.Lagging[0].ID != "n3" || !slices.Equal(up.Lagging[0].Missing, []string{"18/1"}) {
			return fmt.Errorf("upgrade %+v", up)
		}
		return nil
	})
	var tr wire.TokenResponse
	must(t, http.StatusCreated, "POST", n1.URL+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleViewer}, &tr)
	req, _ := http.NewRequest("DELETE", n1.URL+"/v1/tokens/"+tr.ID, nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	code := resp.StatusCode
	d := errBody(t, raw)
	if code != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "30" || d.Code != wire.CodeUpgradeRequired ||
		!strings.Contains(d.Message, "n3 (") || strings.Contains(d.Message, "n2") || !strings.Contains(d.Message, "upgrade them") {
		t.Fatalf("revoke with a lagging member: %d Retry-After %q %s", code, resp.Header.Get("Retry-After"), raw)
	}
	must(t, 201, "PUT", n1.URL+"/v1/hosts/h1", admin, testHost("h1", "r1"), nil) // a legacy write passes
	if code, _ := health(t, n3); code != 200 {
		t.Fatal("the lagging member stopped: the gate let the entry through")
	}

	restartGate(t, n3, nil)
	testenv.Eventually(t, 60*time.Second, "revoke after the upgrade", func() error {
		if code, raw := call(t, "DELETE", n1.URL+"/v1/tokens/"+tr.ID, admin, nil, nil); code != 200 {
			return fmt.Errorf("%d %s", code, raw)
		}
		return nil
	})
	if up := status(t, n1, admin).Upgrade; len(up.Lagging) != 0 || up.EffectiveVersion == fsm.LegacyVersion {
		t.Fatalf("after the upgrade: %+v", up)
	}
}

// TestRackStatusSplitForOlderVoter: while a voter's binary lacks command
// type 22, the leader writes a rack report as per-host status commands
// (touches as the status it holds): the answer is the same, and the older
// member keeps applying (it would stop at a type-22 entry).
func TestRackStatusSplitForOlderVoter(t *testing.T) {
	testenv.SkipShort(t) // a two-member cluster: seconds
	nodes, admin := gateCluster(t)
	n1 := nodes[0]
	n2 := joinGate(t, n1, admin, "n2", "127.0.0.2", coordinator.CommandsWithout(fsm.CmdRackStatus))
	testenv.Eventually(t, 30*time.Second, "n2 recorded as lagging", func() error {
		up := status(t, n1, admin).Upgrade
		if up == nil || len(up.Lagging) != 1 || up.Lagging[0].ID != "n2" {
			return fmt.Errorf("upgrade %+v", up)
		}
		return nil
	})
	u := n1.URL
	agent := n1.Token(wire.RoleAgent, "r1")
	for _, h := range []wire.Host{testHost("h1", "r1"), testHost("h2", "r1"), testHost("x1", "r2")} {
		must(t, 201, "PUT", u+"/v1/hosts/"+h.Name, admin, h, nil)
	}
	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1"}, &l)
	var res wire.RackStatusResult
	must(t, 200, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l.Epoch, Hosts: []wire.RackHostReport{
		{Name: "h1", Status: availableStatus}, {Name: "h2", Status: availableStatus}, {Name: "x1", Status: availableStatus},
	}}, &res)
	if res.Hosts[0].Error != nil || res.Hosts[1].Error != nil || res.Hosts[2].Error == nil || res.Hosts[2].Error.Code != wire.CodeForbidden {
		t.Fatalf("split answer: %+v", res)
	}
	// created is checked by the leader before it splits.
	// (h2's own createdIndex: another entry, a token's last use or a
	// member's version, may land between the two PUTs.)
	var h1, h2 wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", admin, nil, &h1)
	must(t, 200, "GET", u+"/v1/hosts/h2", admin, nil, &h2)
	var cr wire.RackStatusResult
	must(t, 200, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l.Epoch, Hosts: []wire.RackHostReport{
		{Name: "h1", Created: h1.CreatedIndex + 100, Status: availableStatus}, {Name: "h2", Created: h2.CreatedIndex, Status: availableStatus},
	}}, &cr)
	if cr.Hosts[0].Error == nil || cr.Hosts[0].Error.Code != wire.CodeNotFound || cr.Hosts[1].Error != nil {
		t.Fatalf("split with created: %+v %+v", cr.Hosts[0].Error, cr.Hosts[1].Error)
	}
	var tr wire.RackStatusResult
	must(t, 200, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l.Epoch, Hosts: []wire.RackHostReport{
		{Name: "h1", Touch: res.Hosts[0].ModifiedIndex}, {Name: "h2", Touch: 1},
	}}, &tr)
	if tr.Hosts[0].Error != nil || tr.Hosts[1].Error == nil || tr.Hosts[1].Error.Code != wire.CodeConflict {
		t.Fatalf("split touches: %+v %+v", tr.Hosts[0].Error, tr.Hosts[1].Error)
	}
	if d := errBody(t, must(t, 409, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l.Epoch + 1,
		Hosts: []wire.RackHostReport{{Name: "h1", Status: availableStatus}}}, nil)); d.Code != wire.CodeStaleEpoch {
		t.Fatal(d)
	}
	testenv.Eventually(t, 30*time.Second, "n2 applied the split report", func() error {
		var h wire.Host
		if code, raw := call(t, "GET", n2.URL+"/v1/hosts/h2?stale=true", admin, nil, &h); code != 200 {
			return fmt.Errorf("n2 answers %d %s", code, raw)
		}
		if h.Status == nil || h.Status.ProvisioningState != wire.StateAvailable {
			return fmt.Errorf("h2 on n2: %+v", h.Status)
		}
		return nil
	})
	if code, hh := health(t, n2); code != 200 || hh.Stopped != nil {
		t.Fatalf("the older member stopped: %d %+v", code, hh)
	}
	if m := string(must(t, 200, "GET", u+"/metrics", "", nil, nil)); !strings.Contains(m, "\nrackfence_rack_status_split_total 4\n") {
		t.Errorf("/metrics does not count 4 split reports")
	}
}
