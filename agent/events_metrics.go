package agent

import "github.com/prometheus/client_golang/prometheus"

// eventMetrics are the metrics of BMC events and the power poll
// (events*.go), on the agent's registry.
type eventMetrics struct {
	// received counts event POSTs by result (ok, test, other-system,
	// bad-secret, unknown-host, replayed, malformed, not-holder).
	received *prometheus.CounterVec
	// subscribeOps counts subscription calls by op (arm, rearm, disarm)
	// and result (ok, unsupported, error).
	subscribeOps *prometheus.CounterVec
	// powerReads counts power reads by cause (poll, event) and result.
	powerReads *prometheus.CounterVec
}

var subscriptionsDesc = prometheus.NewDesc("rackfence_agent_bmc_event_subscriptions",
	"Registered Redfish hosts of the rack by event state: live (events arrive, power polled slower) or polling (no EventService, subscribing failed, waiting for the first event, or silent).",
	[]string{"state"}, nil)

func newEventMetrics(m *Metrics) *eventMetrics {
	em := &eventMetrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_bmc_events_total",
			Help: "Event POSTs received from BMCs, by result: ok (a power read follows), test, other-system (about another system of a shared BMC: no power read), bad-secret, unknown-host, replayed, malformed, not-holder (all but ok, test and other-system change nothing)."}, []string{"result"}),
		subscribeOps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_bmc_event_subscribe_total",
			Help: "BMC event subscription calls, by op (arm, rearm, disarm) and result (ok, unsupported, error)."}, []string{"op", "result"}),
		powerReads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_power_reads_total",
			Help: "Power reads from BMCs by cause (poll, event) and result (ok, error)."}, []string{"cause", "result"}),
	}
	m.reg.MustRegister(em.received, em.subscribeOps, em.powerReads, subscriptionCollector{m})
	return em
}

// subscriptionCollector reports the running session's subscriptions.
type subscriptionCollector struct{ m *Metrics }

func (c subscriptionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- subscriptionsDesc }

func (c subscriptionCollector) Collect(ch chan<- prometheus.Metric) {
	a := c.m.src.Load()
	if a == nil || !a.eventsOn() {
		return
	}
	counts := map[string]int{eventsLive: 0, eventsPolling: 0}
	if s := a.cur.Load(); s != nil {
		counts = s.events.counts()
	}
	for k, v := range counts {
		ch <- prometheus.MustNewConstMetric(subscriptionsDesc, prometheus.GaugeValue, float64(v), k)
	}
}
