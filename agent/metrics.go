package agent

import (
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/wire"
)

// Lease states of the rackfence_agent_lease_state gauge.
const (
	leaseNone    = 0
	leaseStandby = 1
	leaseHeld    = 2
)

// Metrics are the agent's Prometheus metrics, on their own registry.
type Metrics struct {
	reg          *prometheus.Registry
	reconciles   *prometheus.CounterVec
	actions      *prometheus.HistogramVec
	actionErrors *prometheus.CounterVec
	guarded      *prometheus.HistogramVec
	refusals     *prometheus.CounterVec
	statusWrites *prometheus.CounterVec
	watchErrors  prometheus.Counter
	ackLatency   prometheus.Histogram
	operations   *prometheus.HistogramVec
	leaseState   prometheus.Gauge
	leaseEpoch   prometheus.Gauge
	// softFallbacks counts soft power-offs that ended in a hard one.
	softFallbacks prometheus.Counter
	// rackReports counts per-rack status requests (reporter.go).
	rackReports *prometheus.CounterVec
	// healthReads counts hardware health reads by result (health.go).
	healthReads *prometheus.CounterVec
	// events: BMC events and the power poll (events_metrics.go).
	events *eventMetrics
	// lease mirrors leaseState for the per-rack role gauge.
	lease atomic.Int32
	src   atomic.Pointer[Agent]
}

// NewMetrics creates the agent's metrics on a new registry (with the Go
// and process collectors).
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reconciles = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_reconciles_total",
		Help: "Host reconciles run, by result."}, []string{"result"})
	m.actions = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rackfence_agent_action_seconds",
		Help:    "Provisioner (BMC) call latency by operation.",
		Buckets: []float64{.01, .05, .1, .2, .5, 1, 2, 5, 10, 30, 60, 120}}, []string{"op"})
	m.actionErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_action_errors_total",
		Help: "Provisioner calls that failed, by operation."}, []string{"op"})
	m.guarded = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rackfence_agent_guarded_call_seconds",
		Help:    "Latency of mutating calls through the guard, by operation.",
		Buckets: []float64{.01, .05, .1, .2, .5, 1, 2, 5, 10, 30, 60}}, []string{"op"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_guard_refusals_total",
		Help: "Mutating calls the guard refused (lease invalid or host blocked), by operation."}, []string{"op"})
	m.statusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_status_writes_total",
		Help: "Status reports sent to the coordinator, by result (ok, stale, gone, error)."}, []string{"result"})
	m.rackReports = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_rack_status_reports_total",
		Help: "Per-rack status reports (one request for many hosts) sent to the coordinator, by result (ok, stale, unsupported, error)."}, []string{"result"})
	m.watchErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "rackfence_agent_watch_errors_total",
		Help: "Failed watch requests."})
	m.ackLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rackfence_agent_intent_ack_seconds",
		Help:    "From the watch delivering a host change to the status write carrying its intent acks.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 5, 30, 120}})
	m.operations = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rackfence_agent_operation_duration_seconds",
		Help:    "Duration of each register, inspect, provision and deprovision that ended successfully (status.operationHistory's end - start).",
		Buckets: []float64{1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200}}, []string{"operation"})
	m.leaseState = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rackfence_agent_lease_state",
		Help: "Rack lease state: 0 none, 1 standby (another agent holds it), 2 held."})
	m.leaseEpoch = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rackfence_agent_lease_epoch",
		Help: "Epoch of the last lease held."})
	m.softFallbacks = prometheus.NewCounter(prometheus.CounterOpts{Name: "rackfence_agent_soft_power_off_fallbacks_total",
		Help: "Soft power-offs (reboot --soft, soft power-off holds) the OS did not finish within --soft-power-off-timeout, so the host was powered off hard."})
	m.healthReads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_health_reads_total",
		Help: "Hardware health reads from BMCs, by result (ok, error); one per registered Redfish host per --health-interval."}, []string{"result"})
	m.reg.MustRegister(m.healthReads)
	m.events = newEventMetrics(m)
	m.reg.MustRegister(m.softFallbacks, m.reconciles, m.actions, m.actionErrors, m.guarded, m.refusals, m.statusWrites, m.rackReports,
		m.watchErrors, m.ackLatency, m.operations, m.leaseState, m.leaseEpoch, hostCollector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) setSource(a *Agent) { m.src.Store(a) }

// setLease records the rack lease state (leaseNone, leaseStandby,
// leaseHeld) for both lease gauges.
func (m *Metrics) setLease(state int32) {
	m.lease.Store(state)
	m.leaseState.Set(float64(state))
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is the metrics' registry (to add more collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) observeAction(op string, d time.Duration, err error) {
	m.actions.WithLabelValues(op).Observe(d.Seconds())
	if err != nil {
		m.actionErrors.WithLabelValues(op).Inc()
	}
}

// observeOperations observes, in rackfence_agent_operation_duration_seconds,
// every operation whose end the step from before to after set: each is
// observed once, when the state machine ends it.
func (m *Metrics) observeOperations(before, after *wire.OperationHistory) {
	if after == nil {
		return
	}
	for _, op := range wire.Operations {
		a := after.Metric(op)
		if a.End.IsZero() || a.Start.IsZero() {
			continue
		}
		if before != nil && *before.Metric(op) == *a {
			continue
		}
		m.operations.WithLabelValues(op).Observe(a.Duration().Seconds())
	}
}

// Auditor wraps next (may be nil) so every guarded call is also counted:
// latency by operation and refusals.
func (m *Metrics) Auditor(next guard.Auditor) guard.Auditor { return metricsAuditor{m, next} }

type metricsAuditor struct {
	m    *Metrics
	next guard.Auditor
}

func (a metricsAuditor) Audit(r guard.AuditRecord) {
	if strings.HasPrefix(r.Outcome, "refused") {
		a.m.refusals.WithLabelValues(r.Op).Inc()
	} else {
		a.m.guarded.WithLabelValues(r.Op).Observe(r.End.Sub(r.Start).Seconds())
	}
	if a.next != nil {
		a.next.Audit(r)
	}
}

// hostCollector reports the running session's hosts by state and the
// lease's time left, computed at scrape time.
type hostCollector struct{ m *Metrics }

var (
	hostsDesc = prometheus.NewDesc("rackfence_agent_hosts",
		"Hosts of the rack by provisioning state (this agent's view; empty while standing by).", []string{"state"}, nil)
	opDesc = prometheus.NewDesc("rackfence_agent_hosts_operational",
		"Hosts of the rack by operational status.", []string{"status"}, nil)
	leftDesc = prometheus.NewDesc("rackfence_agent_lease_seconds_left",
		"Seconds until this agent must stop mutating (0 without a lease).", nil, nil)
	queueDesc = prometheus.NewDesc("rackfence_agent_queue_length",
		"Hosts waiting for a worker.", nil, nil)
	roleDesc = prometheus.NewDesc("rackfence_agent_rack_role",
		"1 for this agent's role on its rack (holder, standby or none), 0 for the others: max by (rack) over all agents shows racks with only standbys or no standby.", []string{"rack", "role"}, nil)
)

// Roles of rackfence_agent_rack_role, by lease state.
var leaseRoles = [...]string{leaseNone: "none", leaseStandby: "standby", leaseHeld: "holder"}

func (c hostCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- hostsDesc
	ch <- opDesc
	ch <- leftDesc
	ch <- queueDesc
	ch <- roleDesc
	describeHealth(ch)
}

func (c hostCollector) Collect(ch chan<- prometheus.Metric) {
	a := c.m.src.Load()
	left := 0.0
	if a != nil {
		cur := int(c.m.lease.Load())
		for st, role := range leaseRoles {
			v := 0.0
			if st == cur {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(roleDesc, prometheus.GaugeValue, v, a.cfg.Rack, role)
		}
		if l, ok := a.cfg.Holder.Valid(0); ok {
			left = time.Until(l.Deadline).Seconds()
		}
		if s := a.cur.Load(); s != nil {
			prov, op := s.store.countByState()
			for k, v := range prov {
				ch <- prometheus.MustNewConstMetric(hostsDesc, prometheus.GaugeValue, float64(v), k)
			}
			for k, v := range op {
				ch <- prometheus.MustNewConstMetric(opDesc, prometheus.GaugeValue, float64(v), k)
			}
			ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(s.queue.len()))
			collectHealth(ch, s.store)
		}
	}
	ch <- prometheus.MustNewConstMetric(leftDesc, prometheus.GaugeValue, left)
}
