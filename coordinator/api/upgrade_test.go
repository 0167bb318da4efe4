package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// gateStore makes the leader read health every 200ms, compare hashes every
// 500ms and members hash every 8 entries; only, when set, makes the member
// apply only those command types (an older binary).
func gateStore(only map[fsm.CmdType]byte) func(*coordinator.Config) {
	return func(c *coordinator.Config) {
		c.ProbeInterval = 200 * time.Millisecond
		c.HashCheckInterval = 500 * time.Millisecond
		c.HashEvery = 8
		c.TestOnlyCommands = only
	}
}

// gateCluster starts n1 (leader) and joins the others; old lists the
// members that play a binary without CmdRevokeToken.
func gateCluster(t *testing.T, old ...string) ([]*node, string) {
	t.Helper()
	n1 := startNodeCfg(t, "n1", "127.0.0.1", t.TempDir(), true, 0, 0, gateStore(nil), nil)
	testenv.Eventually(t, 30*time.Second, "bootstrap leader ready", func() error {
		if !n1.store.Ready() {
			return fmt.Errorf("state %s", n1.store.State())
		}
		return nil
	})
	admin := adminTokenOf(t, n1)
	return []*node{n1}, admin
}

func joinGate(t *testing.T, leader *node, admin, id, ip string, only map[fsm.CmdType]byte) *node {
	t.Helper()
	n := startNodeCfg(t, id, ip, t.TempDir(), false, 0, 0, gateStore(only), nil)
	must(t, 200, "POST", leader.url+"/v1/cluster/join", admin, wire.JoinRequest{ID: id, RaftAddr: n.raftAddr, HTTPAddr: n.url}, nil)
	return n
}

// restartGate stops n and starts it again on the same data dir and ports.
func restartGate(t *testing.T, n *node, only map[fsm.CmdType]byte) *node {
	t.Helper()
	n.stop()
	_, rp, _ := net.SplitHostPort(n.raftAddr)
	u, _ := url.Parse(n.url)
	raftPort, _ := strconv.Atoi(rp)
	httpPort, _ := strconv.Atoi(u.Port())
	return startNodeCfg(t, n.id, n.ip, n.dir, false, raftPort, httpPort, gateStore(only), nil)
}

func health(t *testing.T, n *node) (int, wire.Health) {
	t.Helper()
	var h wire.Health
	code, raw := call(t, "GET", n.url+"/v1/health", "", nil, nil)
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Logf("health of %s: %d %s", n.id, code, raw)
	}
	return code, h
}

func status(t *testing.T, n *node, admin string) wire.ClusterStatus {
	t.Helper()
	var st wire.ClusterStatus
	must(t, 200, "GET", n.url+"/v1/status", admin, nil, &st)
	return st
}

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
	must(t, http.StatusCreated, "POST", n1.url+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleViewer}, &tr)
	must(t, 200, "DELETE", n1.url+"/v1/tokens/"+tr.ID, admin, nil, nil)
	n2 := joinGate(t, n1, admin, "n2", "127.0.0.2", nil)
	n3 := joinGate(t, n1, admin, "n3", "127.0.0.3", fsm.TestOnlyCommandsWithout(fsm.CmdRevokeToken))

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
		if st := n3.store.State(); st != "shutdown" {
			return fmt.Errorf("state %s", st)
		}
		return nil
	})
	code, raw := call(t, "GET", n3.url+"/v1/hosts?stale=true", admin, nil, nil)
	if d := errBody(t, raw); code != http.StatusServiceUnavailable || d.Code != wire.CodeMemberStopped || !strings.Contains(d.Message, want) {
		t.Fatalf("stale read on the stopped member: %d %s", code, raw)
	}
	// The others go on; the leader shows n3 stopped.
	for i := 0; i < 5; i++ {
		must(t, 201, "PUT", fmt.Sprintf("%s/v1/hosts/h%d", n2.url, i), admin, testHost(fmt.Sprintf("h%d", i), "r1"), nil)
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
		must(t, 200, "GET", n1.url+"/v1/hosts", admin, nil, &a)
		if code, _ := call(t, "GET", n3.url+"/v1/hosts?stale=true", admin, nil, &b); code != 200 {
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
	n3 := joinGate(t, n1, admin, "n3", "127.0.0.3", fsm.TestOnlyCommandsWithout(fsm.CmdRevokeToken))
	testenv.Eventually(t, 30*time.Second, "n3 recorded as lagging", func() error {
		up := status(t, n1, admin).Upgrade
		if up == nil || len(up.Lagging) != 1 || up.Lagging[0].ID != "n3" || !slices.Equal(up.Lagging[0].Missing, []string{"18/1"}) {
			return fmt.Errorf("upgrade %+v", up)
		}
		return nil
	})
	var tr wire.TokenResponse
	must(t, http.StatusCreated, "POST", n1.url+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleViewer}, &tr)
	req, _ := http.NewRequest("DELETE", n1.url+"/v1/tokens/"+tr.ID, nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := client.Do(req)
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
	must(t, 201, "PUT", n1.url+"/v1/hosts/h1", admin, testHost("h1", "r1"), nil) // a legacy write passes
	if code, _ := health(t, n3); code != 200 {
		t.Fatal("the lagging member stopped: the gate let the entry through")
	}

	restartGate(t, n3, nil)
	testenv.Eventually(t, 60*time.Second, "revoke after the upgrade", func() error {
		if code, raw := call(t, "DELETE", n1.url+"/v1/tokens/"+tr.ID, admin, nil, nil); code != 200 {
			return fmt.Errorf("%d %s", code, raw)
		}
		return nil
	})
	if up := status(t, n1, admin).Upgrade; len(up.Lagging) != 0 || up.EffectiveVersion == fsm.LegacyVersion {
		t.Fatalf("after the upgrade: %+v", up)
	}
}

// TestDivergenceAlarm: the members' state hashes match; a member whose
// state is changed behind the log's back (test-only hook) is named by the
// leader's check: status warning, hashCheck.mismatched, metric.
func TestDivergenceAlarm(t *testing.T) {
	testenv.SkipShort(t) // a three-member cluster: seconds
	nodes, admin := gateCluster(t)
	n1 := nodes[0]
	joinGate(t, n1, admin, "n2", "127.0.0.2", nil)
	n3 := joinGate(t, n1, admin, "n3", "127.0.0.3", nil)
	put := func(from, to int) {
		for i := from; i < to; i++ {
			must(t, 201, "PUT", fmt.Sprintf("%s/v1/hosts/h%02d", n1.url, i), admin, testHost(fmt.Sprintf("h%02d", i), "r1"), nil)
		}
	}
	put(0, 20)
	testenv.Eventually(t, 30*time.Second, "hashes match", func() error {
		st := status(t, n1, admin)
		hc := st.Upgrade.HashCheck
		if hc == nil || hc.Index == 0 || !slices.Equal(hc.Matching, []string{"n2", "n3"}) || hashWarnings(st) != nil {
			return fmt.Errorf("hash check %+v, warnings %v", hc, st.Warnings)
		}
		return nil
	})
	if !n3.store.FSM().TestOnlyCorruptHost("h05", "corrupted") {
		t.Fatal("no host to corrupt")
	}
	put(20, 40)
	testenv.Eventually(t, 30*time.Second, "the alarm", func() error {
		st := status(t, n1, admin)
		hc := st.Upgrade.HashCheck
		if hc == nil || !slices.Equal(hc.Mismatched, []string{"n3"}) || !slices.Equal(hc.Matching, []string{"n2"}) {
			return fmt.Errorf("hash check %+v", hc)
		}
		if w := hashWarnings(st); len(w) != 1 || !strings.Contains(w[0], "member n3's state hash") || !strings.Contains(w[0], "join it again") {
			return fmt.Errorf("warnings %v", st.Warnings)
		}
		_, raw := call(t, "GET", n1.url+"/metrics", "", nil, nil)
		if !strings.Contains(string(raw), `rackfence_state_hash_mismatch{member="n3"} 1`) ||
			!strings.Contains(string(raw), `rackfence_state_hash_mismatch{member="n2"} 0`) {
			return fmt.Errorf("metric not raised")
		}
		return nil
	})
}

func hashWarnings(st wire.ClusterStatus) []string {
	var out []string
	for _, w := range st.Warnings {
		if strings.Contains(w, "state hash") {
			out = append(out, w)
		}
	}
	return out
}
