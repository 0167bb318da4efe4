package coordinator

import (
	"strconv"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// Metrics are the store's Prometheus figures. Create with NewMetrics,
// pass in Config.Metrics, then Register once the store is open.
type Metrics struct {
	applyLatency prometheus.Histogram
	batchSize    prometheus.Histogram
	applied      *prometheus.CounterVec
	expired      *prometheus.CounterVec
	// rackStatusSplit counts rack status reports split into per-host
	// commands (metrics_rackstatus.go).
	rackStatusSplit prometheus.Counter
	// backups counts backups served, by result (metrics_backup.go).
	backups *prometheus.CounterVec
	// compressedIn and compressedOut count the bytes of the entries the
	// leader compressed, before and after (compress.go).
	compressedIn, compressedOut prometheus.Counter
	// abandoned and shed count writes dropped by a backlogged leader
	// (metrics_shed.go).
	abandoned, shed prometheus.Counter
}

// NewMetrics creates the store's collectors.
func NewMetrics() *Metrics {
	in, out := newCompressedBytes()
	abandoned, shed := newShedCounters()
	return &Metrics{
		compressedIn: in, compressedOut: out,
		abandoned: abandoned, shed: shed,
		applyLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rackfence_apply_seconds",
			Help:    "Time from a write entering the leader's queue to its result from the FSM.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rackfence_batch_commands",
			Help:    "Commands per Raft log entry written by this leader.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10),
		}),
		applied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rackfence_fsm_commands_total",
			Help: "Commands applied by this node's FSM, by command type.",
		}, []string{"type"}),
		expired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rackfence_lease_expirations_total",
			Help: "Rack leases this member, as leader, expired because their holder stopped renewing, by rack.",
		}, []string{"rack"}),
		rackStatusSplit: newRackStatusSplit(),
		backups:         newBackupCounter(),
	}
}

// Register registers the collectors and the store's gauges.
func (m *Metrics) Register(reg prometheus.Registerer, s *Store) {
	reg.MustRegister(m.applyLatency, m.batchSize, m.applied, m.expired)
	reg.MustRegister(m.rackStatusSplit, m.backups, m.compressedIn, m.compressedOut)
	reg.MustRegister(m.abandoned, m.shed)
	registerBackup(reg, s)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rackfence_raft_state",
		Help: "Raft state: 0 follower, 1 candidate, 2 leader, 3 shutdown.",
	}, func() float64 { return float64(s.raft.State()) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rackfence_raft_commit_index", Help: "Raft commit index known to this node.",
	}, func() float64 { return float64(s.raft.CommitIndex()) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rackfence_raft_applied_index", Help: "Index of the last entry this node's FSM applied.",
	}, func() float64 { return float64(s.fsm.AppliedIndex()) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rackfence_raft_leader", Help: "1 when this node is the leader.",
	}, func() float64 {
		if s.raft.State() == raft.Leader {
			return 1
		}
		return 0
	}))
	reg.MustRegister(&secretsCollector{s: s})
	registerGate(reg, s)
	registerLogWrites(reg, s)
	reg.MustRegister(newMemberCollector(s))
	reg.MustRegister(newFleetCollector(s.fsm, time.Now))
}

// observeExpiry counts a lease the leader's timer expired.
func (m *Metrics) observeExpiry(rack string) {
	if m != nil {
		m.expired.WithLabelValues(rack).Inc()
	}
}

// initExpiry creates the rack's expiry counter at 0.
func (m *Metrics) initExpiry(rack string) {
	if m != nil {
		m.expired.WithLabelValues(rack)
	}
}

func (m *Metrics) observeApply(t fsm.CmdType) {
	m.applied.WithLabelValues(strconv.Itoa(int(t))).Inc()
}
