package coordinator

import "github.com/prometheus/client_golang/prometheus"

// newShedCounters are the counters of the writes a backlogged leader
// drops before they reach the Raft log: none of them was applied.
func newShedCounters() (abandoned, shed prometheus.Counter) {
	abandoned = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rackfence_writes_abandoned_total",
		Help: "Queued writes dropped before reaching the Raft log because their caller had stopped waiting (its timeout passed): not applied.",
	})
	shed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rackfence_writes_shed_total",
		Help: "Writes refused with 503 (not applied) because the leader's write queue was older than the apply timeout.",
	})
	return abandoned, shed
}

// observeAbandoned counts a queued write dropped because its caller left.
func (m *Metrics) observeAbandoned() {
	if m != nil {
		m.abandoned.Inc()
	}
}

// observeShed counts a write refused because the queue was overdue.
func (m *Metrics) observeShed() {
	if m != nil {
		m.shed.Inc()
	}
}
