package api

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// gateStore makes the leader read health every 200ms, compare hashes every
// 500ms and members hash every 8 entries.
func gateStore(c *coordinator.Config) {
	c.ProbeInterval = 200 * time.Millisecond
	c.HashCheckInterval = 500 * time.Millisecond
	c.HashEvery = 8
}

// gateCluster starts n1 (leader).
func gateCluster(t *testing.T) ([]*node, string) {
	t.Helper()
	n1 := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: t.TempDir(), Bootstrap: true, Store: gateStore}, nil)
	testenv.Eventually(t, 30*time.Second, "bootstrap leader ready", func() error {
		if !n1.store.Ready() {
			return fmt.Errorf("state %s", n1.store.State())
		}
		return nil
	})
	admin := adminTokenOf(t, n1)
	return []*node{n1}, admin
}

func joinGate(t *testing.T, leader *node, admin, id, ip string) *node {
	t.Helper()
	n := startNode(t, member.Config{ID: id, IP: ip, Dir: t.TempDir(), Store: gateStore}, nil)
	must(t, 200, "POST", leader.url+"/v1/cluster/join", admin, wire.JoinRequest{ID: id, RaftAddr: n.raftAddr, HTTPAddr: n.url}, nil)
	return n
}

func status(t *testing.T, n *node, admin string) wire.ClusterStatus {
	t.Helper()
	var st wire.ClusterStatus
	must(t, 200, "GET", n.url+"/v1/status", admin, nil, &st)
	return st
}

// TestDivergenceAlarm: the members' state hashes match; a member whose
// state is changed behind the log's back (an entry applied to its state
// machine alone) is named by the
// leader's check: status warning, hashCheck.mismatched, metric.
func TestDivergenceAlarm(t *testing.T) {
	testenv.SkipShort(t) // a three-member cluster: seconds
	nodes, admin := gateCluster(t)
	n1 := nodes[0]
	joinGate(t, n1, admin, "n2", "127.0.0.2")
	n3 := joinGate(t, n1, admin, "n3", "127.0.0.3")
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
	corruptHost(t, n3.store.FSM(), "h05", "corrupted")
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

// corruptHost changes host name's consumer in f by applying a write to
// f alone, outside Raft, at the index f last applied: f's state then
// differs from its peers' with no log entry to explain it.
func corruptHost(t *testing.T, f *fsm.FSM, name, consumer string) {
	t.Helper()
	h, ok := f.Host(name)
	if !ok {
		t.Fatalf("no host %s to corrupt", name)
	}
	h.Consumer = consumer
	data, err := fsm.Encode(fsm.PutHostCmd{Host: h, Time: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := f.Apply(f.AppliedIndex(), data).(fsm.Result); !ok || r.Err != nil {
		t.Fatalf("corrupt %s: %+v", name, r)
	}
	if h, _ := f.Host(name); h.Consumer != consumer {
		t.Fatalf("corrupt %s: consumer %q", name, h.Consumer)
	}
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
