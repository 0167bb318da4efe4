// Package raftprom exports hashicorp/raft's and its log store's own
// figures (go-metrics) as Prometheus metrics named the Prometheus way:
// timings as histograms in seconds (_seconds), state changes as counters
// (_total), each with help text. Keys it does not list are dropped.
package raftprom

import (
	"strings"
	"time"

	gometrics "github.com/armon/go-metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// Export installs the sink as go-metrics' global sink, so raft's figures
// land in reg. Call once per process.
func Export(reg prometheus.Registerer) error {
	sink, err := NewSink(reg)
	if err != nil {
		return err
	}
	cfg := gometrics.DefaultConfig("rackfence")
	cfg.EnableHostname = false
	cfg.EnableHostnameLabel = false
	cfg.EnableRuntimeMetrics = false // the Go collector already reports these
	cfg.TimerGranularity = time.Millisecond
	_, err = gometrics.NewGlobal(cfg, sink)
	return err
}

// keyOf joins a go-metrics key without the service name ("rackfence").
func keyOf(key []string) string {
	if len(key) > 0 && key[0] == "rackfence" {
		key = key[1:]
	}
	return strings.Join(key, ".")
}

// raftTiming maps one raft timing key to a histogram in seconds.
type raftTiming struct {
	key, name, help string
	// label, when set, is the go-metrics label exported as "peer".
	label string
}

// raftTimings are the raft and log store timings exported. go-metrics
// hands them over in milliseconds (TimerGranularity, and raft's own
// lastContact sample); the sink divides by 1000.
var raftTimings = []raftTiming{
	{key: "raft.commitTime", name: "rackfence_raft_commit_seconds",
		help: "Leader: time from appending an entry to its commit by a quorum."},
	{key: "raft.leader.dispatchLog", name: "rackfence_raft_leader_dispatch_log_seconds",
		help: "Leader: time to write a batch of new entries to its own log store, fsync included (any log store)."},
	{key: "raft.rpc.appendEntries.storeLogs", name: "rackfence_raft_follower_store_logs_seconds",
		help: "Follower: time to write replicated entries to its log store, fsync included (any log store)."},
	{key: "raft.boltdb.storeLogs", name: "rackfence_raft_boltdb_store_logs_seconds",
		help: "BoltDB log store: time of one StoreLogs call (one transaction and its fsync)."},
	{key: "raft.replication.appendEntries.rpc", name: "rackfence_raft_replication_append_entries_seconds", label: "peer_id",
		help: "Leader: AppendEntries round trip to one follower, by follower ID."},
	{key: "raft.rpc.appendEntries", name: "rackfence_raft_rpc_append_entries_seconds",
		help: "Follower: time to handle one AppendEntries RPC from the leader."},
	{key: "raft.fsm.apply", name: "rackfence_raft_fsm_apply_seconds",
		help: "Time for the FSM to apply one committed entry."},
	{key: "raft.leader.lastContact", name: "rackfence_raft_leader_last_contact_seconds",
		help: "Leader: time since it last heard from a follower, sampled at each check."},
	{key: "raft.candidate.electSelf", name: "rackfence_raft_election_seconds",
		help: "Candidate: time to run one election (ask for votes)."},
	{key: "raft.snapshot.create", name: "rackfence_raft_snapshot_create_seconds",
		help: "Time to take an FSM snapshot."},
	{key: "raft.snapshot.persist", name: "rackfence_raft_snapshot_persist_seconds",
		help: "Time to write a snapshot to disk."},
}

// raftCounters are raft's state-change counters.
var raftCounters = []struct{ key, name, help string }{
	{"raft.state.leader", "rackfence_raft_became_leader_total", "Times this member became the leader."},
	{"raft.state.candidate", "rackfence_raft_became_candidate_total", "Times this member started an election (became a candidate)."},
	{"raft.state.follower", "rackfence_raft_became_follower_total", "Times this member became a follower."},
	{"raft.transition.heartbeat_timeout", "rackfence_raft_heartbeat_timeouts_total",
		"Follower: times it heard from no leader within the heartbeat timeout."},
	{"raft.transition.leader_lease_timeout", "rackfence_raft_leader_lease_timeouts_total",
		"Leader: times it stepped down for lack of contact with a quorum."},
}

// Sink is a go-metrics sink that keeps the figures listed above as
// Prometheus collectors and drops every other key. Histograms and
// counters are created at start, so each series exists from the first
// scrape (increase() and rate() see the first event).
type Sink struct {
	timings  map[string]*prometheus.HistogramVec
	labels   map[string]string
	counters map[string]prometheus.Counter
}

var _ gometrics.MetricSink = (*Sink)(nil)

// NewSink creates the sink's collectors on reg.
func NewSink(reg prometheus.Registerer) (*Sink, error) {
	s := &Sink{timings: map[string]*prometheus.HistogramVec{}, labels: map[string]string{}, counters: map[string]prometheus.Counter{}}
	for _, t := range raftTimings {
		var names []string
		if t.label != "" {
			names = []string{"peer"}
			s.labels[t.key] = t.label
		}
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: t.name, Help: t.help,
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 17)}, names) // 0.1 ms … 6.5 s
		if err := reg.Register(h); err != nil {
			return nil, err
		}
		s.timings[t.key] = h
	}
	for _, c := range raftCounters {
		ctr := prometheus.NewCounter(prometheus.CounterOpts{Name: c.name, Help: c.help})
		if err := reg.Register(ctr); err != nil {
			return nil, err
		}
		s.counters[c.key] = ctr
	}
	return s, nil
}

func (s *Sink) AddSample(key []string, val float32) { s.AddSampleWithLabels(key, val, nil) }

func (s *Sink) AddSampleWithLabels(key []string, val float32, labels []gometrics.Label) {
	k := keyOf(key)
	h, ok := s.timings[k]
	if !ok {
		return
	}
	var values []string
	if want := s.labels[k]; want != "" {
		v := "unknown"
		for _, l := range labels {
			if l.Name == want {
				v = l.Value
			}
		}
		values = []string{v}
	}
	h.WithLabelValues(values...).Observe(float64(val) / 1000)
}

func (s *Sink) IncrCounter(key []string, val float32) { s.IncrCounterWithLabels(key, val, nil) }

func (s *Sink) IncrCounterWithLabels(key []string, val float32, _ []gometrics.Label) {
	if c, ok := s.counters[keyOf(key)]; ok && val >= 0 {
		c.Add(float64(val))
	}
}

// Gauges and keys are not exported: rackfence's own gauges cover raft's
// state (rackfence_raft_state, _leader, _commit_index, _applied_index).
func (s *Sink) SetGauge([]string, float32)                              {}
func (s *Sink) SetGaugeWithLabels([]string, float32, []gometrics.Label) {}
func (s *Sink) EmitKey([]string, float32)                               {}
