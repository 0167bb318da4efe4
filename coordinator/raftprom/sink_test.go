package raftprom

import (
	"strings"
	"testing"

	gometrics "github.com/armon/go-metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The sink turns raft's millisecond samples into second histograms with
// help text, keeps the follower label, counts state changes and drops
// keys it does not list.
func TestRaftSinkUnits(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := NewSink(reg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddSample([]string{"rackfence", "raft", "commitTime"}, 250)
	s.AddSample([]string{"rackfence", "raft", "commitTime"}, 2)
	s.AddSampleWithLabels([]string{"rackfence", "raft", "replication", "appendEntries", "rpc"}, 4, []gometrics.Label{{Name: "peer_id", Value: "n2"}})
	s.AddSample([]string{"rackfence", "raft", "replication", "appendEntries", "rpc", "n2"}, 4) // legacy key: dropped
	s.AddSample([]string{"rackfence", "raft", "net", "getRPCType"}, 9)                         // not listed: dropped
	s.IncrCounter([]string{"rackfence", "raft", "state", "leader"}, 1)
	s.IncrCounter([]string{"rackfence", "raft", "state", "candidate"}, 1)
	s.IncrCounter([]string{"rackfence", "raft", "state", "candidate"}, 1)

	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP rackfence_raft_became_candidate_total Times this member started an election (became a candidate).
# TYPE rackfence_raft_became_candidate_total counter
rackfence_raft_became_candidate_total 2
# HELP rackfence_raft_became_leader_total Times this member became the leader.
# TYPE rackfence_raft_became_leader_total counter
rackfence_raft_became_leader_total 1
# HELP rackfence_raft_leader_lease_timeouts_total Leader: times it stepped down for lack of contact with a quorum.
# TYPE rackfence_raft_leader_lease_timeouts_total counter
rackfence_raft_leader_lease_timeouts_total 0
`), "rackfence_raft_became_candidate_total", "rackfence_raft_became_leader_total", "rackfence_raft_leader_lease_timeouts_total"); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				k := mf.GetName()
				for _, l := range m.GetLabel() {
					k += "/" + l.GetName() + "=" + l.GetValue()
				}
				got[k+" count"] = float64(h.GetSampleCount())
				got[k+" sum"] = h.GetSampleSum()
			}
		}
	}
	want := map[string]float64{
		"rackfence_raft_commit_seconds count": 2, "rackfence_raft_commit_seconds sum": 0.252,
		"rackfence_raft_replication_append_entries_seconds/peer=n2 count": 1,
		"rackfence_raft_replication_append_entries_seconds/peer=n2 sum":   0.004,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g < v-1e-6 || g > v+1e-6 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && v != 0 {
			t.Errorf("unexpected samples: %s = %v", k, v)
		}
	}
}
