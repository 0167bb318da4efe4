package coordinator

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/shared/wire"
)

// registerLogWrites registers this member's Raft log write figures.
func registerLogWrites(reg prometheus.Registerer, s *Store) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "rackfence_raft_log_write_errors_total",
		Help: "Writes of this member's Raft log (appends, deletes) that failed, e.g. with no space left on device.",
	}, func() float64 { _, n := s.logw.state(); return float64(n) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rackfence_raft_log_write_failing",
		Help: "1 while this member's last Raft log write failed (it falls behind the leader; GET /v1/health says why), 0 once an append succeeds.",
	}, func() float64 {
		if failing, _ := s.logw.state(); failing {
			return 1
		}
		return 0
	}))
}

// memberCollector is the leader's view of the other members, from its
// last read of their GET /v1/health (peers.go): whether each answered ok,
// and how many log entries it applied fewer than the leader. Members
// export nothing here; a new leader reports once it has read them.
type memberCollector struct {
	s                  *Store
	healthy, lag, seen *prometheus.Desc
}

func newMemberCollector(s *Store) *memberCollector {
	return &memberCollector{s: s,
		healthy: prometheus.NewDesc("rackfence_member_healthy",
			"Leader only: 1 when the member answered its last GET /v1/health with status ok; 0 when it did not answer (down, unreachable) or answered stopped or log_write_failing.",
			[]string{"member"}, nil),
		lag: prometheus.NewDesc("rackfence_member_applied_index_lag",
			"Leader only: the leader's applied Raft index minus the member's, at the leader's last read of its GET /v1/health (absent while it does not answer).",
			[]string{"member"}, nil),
		seen: prometheus.NewDesc("rackfence_member_applied_index",
			"Leader only: the member's applied Raft index at the leader's last read of its GET /v1/health.",
			[]string{"member"}, nil),
	}
}

func (c *memberCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.healthy
	ch <- c.lag
	ch <- c.seen
}

func (c *memberCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	if !s.Ready() {
		return
	}
	ms, err := s.Members()
	if err != nil {
		return
	}
	stale := 3 * s.cfg.ProbeInterval
	for _, m := range ms {
		if m.ID == s.cfg.NodeID {
			continue
		}
		p, ok := s.probes.get(m.ID)
		if !ok || time.Since(p.at) > stale {
			continue // not read since this member leads
		}
		up := p.err == nil && p.health.Status == wire.HealthOK
		ch <- prometheus.MustNewConstMetric(c.healthy, prometheus.GaugeValue, b2f(up), m.ID)
		if p.err != nil || p.health.AppliedIndex == 0 {
			continue // no answer, or a binary that does not say
		}
		lag := uint64(0)
		if p.applied > p.health.AppliedIndex {
			lag = p.applied - p.health.AppliedIndex
		}
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(lag), m.ID)
		ch <- prometheus.MustNewConstMetric(c.seen, prometheus.GaugeValue, float64(p.health.AppliedIndex), m.ID)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// memberWarnings are the status warnings for members that cannot write
// their Raft log: this one, and (on the leader) the others as it last
// read them.
func (s *Store) memberWarnings() []string {
	var out []string
	if p := s.logw.problem(); p != "" {
		out = append(out, "this member "+p)
	}
	if !s.IsLeader() {
		return out
	}
	ms, err := s.Members()
	if err != nil {
		return out
	}
	for _, m := range ms {
		if m.ID == s.cfg.NodeID {
			continue
		}
		if p, ok := s.probes.get(m.ID); ok && p.err == nil && p.health.Status == wire.HealthLogWriteFailing {
			out = append(out, "member "+m.ID+" "+p.health.Reason)
		}
	}
	return out
}
