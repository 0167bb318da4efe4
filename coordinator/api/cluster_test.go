package api

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// leaderOf waits until one of nodes leads and is ready.
func leaderOf(t *testing.T, nodes ...*node) *node {
	t.Helper()
	var l *node
	testenv.Eventually(t, 60*time.Second, "a ready leader", func() error {
		for _, n := range nodes {
			if n.store != nil && n.store.Ready() {
				l = n
				return nil
			}
		}
		return fmt.Errorf("no leader among %d nodes", len(nodes))
	})
	return l
}

// TestClusterJoinForwardFailoverRestart runs three members over real TCP on
// 127.0.0.1-3: join (one through a follower), writes and linearizable reads
// through a follower, leader failover with a lease that survives it, a
// restart from the data dir, and member removal.
func TestClusterJoinForwardFailoverRestart(t *testing.T) {
	testenv.SkipShort(t) // a three-member Raft cluster with failover and restart: seconds, not the fast layer
	n1, admin := startLeader(t, "127.0.0.1")
	n2 := startNode(t, member.Config{ID: "n2", IP: "127.0.0.2", Dir: t.TempDir()}, nil)
	n3 := startNode(t, member.Config{ID: "n3", IP: "127.0.0.3", Dir: t.TempDir()}, nil)
	must(t, 200, "POST", n1.url+"/v1/cluster/join", admin, wire.JoinRequest{ID: "n2", RaftAddr: n2.raftAddr, HTTPAddr: n2.url}, nil)
	// n3 joins through n2, a follower: the request is forwarded to the leader.
	testenv.Eventually(t, 30*time.Second, "n2 knows the leader's API", func() error {
		if _, u := n2.store.Leader(); u == "" {
			return fmt.Errorf("no leader yet")
		}
		return nil
	})
	must(t, 200, "POST", n2.url+"/v1/cluster/join", admin, wire.JoinRequest{ID: "n3", RaftAddr: n3.raftAddr, HTTPAddr: n3.url}, nil)
	testenv.Eventually(t, 30*time.Second, "n3 knows the leader's API", func() error {
		if _, u := n3.store.Leader(); u == "" {
			return fmt.Errorf("no leader yet")
		}
		return nil
	})
	var ms wire.List[wire.Member]
	must(t, 200, "GET", n3.url+"/v1/cluster/members", admin, nil, &ms)
	if len(ms.Items) != 3 {
		t.Fatalf("members: %+v", ms)
	}
	// Joining again with the same ID and address is a no-op.
	must(t, 200, "POST", n3.url+"/v1/cluster/join", admin, wire.JoinRequest{ID: "n3", RaftAddr: n3.raftAddr, HTTPAddr: n3.url}, nil)

	// Writes through a follower; a linearizable read through another
	// follower sees them at once.
	for i := 0; i < 20; i++ {
		must(t, 201, "PUT", fmt.Sprintf("%s/v1/hosts/h%02d", n3.url, i), admin, testHost(fmt.Sprintf("h%02d", i), "r1"), nil)
		var h wire.Host
		must(t, 200, "GET", fmt.Sprintf("%s/v1/hosts/h%02d", n2.url, i), admin, nil, &h)
	}
	agent := newToken(t, n2.url, admin, wire.RoleAgent, "r1")
	var l wire.Lease
	must(t, 200, "POST", n3.url+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", TTL: wire.Duration(20 * time.Second)}, &l)
	// A lease nobody renews: only the new leader's re-armed timer can end it.
	agent2 := newToken(t, n2.url, admin, wire.RoleAgent, "r2")
	must(t, 200, "POST", n3.url+"/v1/racks/r2/lease", agent2, wire.LeaseRequest{Holder: "gone", TTL: wire.Duration(10 * time.Second)}, nil)
	var st wire.ClusterStatus
	must(t, 200, "GET", n2.url+"/v1/status", admin, nil, &st)
	if st.State != "follower" || st.Leader != n1.url || st.ClusterID == "" || st.Tier != "test" {
		t.Fatalf("status on a follower: %+v", st)
	}

	// Failover: the leader goes away; a new one takes over, with every
	// acknowledged write and the lease (same epoch, renewable).
	n1.stop()
	nl := leaderOf(t, n2, n3)
	var hosts wire.List[wire.Host]
	must(t, 200, "GET", nl.url+"/v1/hosts?rack=r1", admin, nil, &hosts)
	if len(hosts.Items) != 20 {
		t.Fatalf("after failover: %d hosts", len(hosts.Items))
	}
	var other *node
	if nl == n2 {
		other = n3
	} else {
		other = n2
	}
	testenv.Eventually(t, 30*time.Second, "follower knows the new leader", func() error {
		if _, u := other.store.Leader(); u != nl.url {
			return fmt.Errorf("leader url %q", u)
		}
		return nil
	})
	must(t, 200, "PUT", other.url+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", Epoch: l.Epoch}, nil)
	must(t, 201, "PUT", other.url+"/v1/hosts/after", admin, testHost("after", "r1"), nil)
	testenv.Eventually(t, 90*time.Second, "the new leader expires the unrenewed lease", func() error {
		var rec wire.List[wire.LeaseRecord]
		if code, raw := call(t, "GET", nl.url+"/v1/racks/r2/leases", admin, nil, &rec); code != 200 {
			return fmt.Errorf("GET leases: %d %s", code, raw) // e.g. 503 while a new election runs
		}
		if len(rec.Items) != 1 || rec.Items[0].End != "expired" {
			return fmt.Errorf("history %+v", rec.Items)
		}
		return nil
	})

	// Restart n1 from its data dir, same addresses, no bootstrap, no join.
	r1 := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: n1.dir, RaftPort: port(t, n1.raftAddr), HTTPPort: port(t, n1.url)}, nil)
	testenv.Eventually(t, 60*time.Second, "restarted n1 caught up", func() error {
		if _, ok := r1.store.FSM().Host("after"); !ok {
			return fmt.Errorf("n1 has not applied the write made while it was down")
		}
		return nil
	})
	must(t, 200, "GET", r1.url+"/v1/hosts/after", admin, nil, nil) // forwarded, linearizable

	// Remove a member.
	must(t, 200, "DELETE", r1.url+"/v1/cluster/members/"+other.id, admin, nil, nil)
	must(t, 200, "GET", nl.url+"/v1/cluster/members", admin, nil, &ms)
	if len(ms.Items) != 2 {
		t.Fatalf("after remove: %+v", ms)
	}
	must(t, 404, "DELETE", nl.url+"/v1/cluster/members/nobody", admin, nil, nil)
}

func port(t *testing.T, addr string) int {
	t.Helper()
	var p int
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			fmt.Sscanf(addr[i+1:], "%d", &p)
			return p
		}
	}
	t.Fatalf("no port in %s", addr)
	return 0
}
