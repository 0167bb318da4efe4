package bmcaccount

import "github.com/prometheus/client_golang/prometheus"

// Results of a settling of a host's account, the label of
// rackfence_agent_bmc_account_rotations_total.
const (
	resultRotated = "rotated" // a new password confirmed
	resultOff     = "off"     // the fence at the BMC is off for the host
	resultError   = "error"   // retried at the next look or action
	// resultDeferred: the coordinator could not record the pending
	// password yet (the version gate); the operator's credentials are
	// used and the rotation is retried after a backoff.
	resultDeferred = "deferred"
)

// metrics counts rotations by result; nil-safe.
type metrics struct{ rotations *prometheus.CounterVec }

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{rotations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rackfence_agent_bmc_account_rotations_total",
		Help: "Settlings of a host's BMC account by the lease holder (--bmc-account-rotation), by result: rotated, off (the fence at the BMC is off for the host), deferred (the coordinator cannot record the account yet: retried after a backoff), error (retried)."},
		[]string{"result"})}
	for _, r := range []string{resultRotated, resultOff, resultDeferred, resultError} {
		m.rotations.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.rotations)
	}
	return m
}

func (m *metrics) count(result string) { m.rotations.WithLabelValues(result).Inc() }
