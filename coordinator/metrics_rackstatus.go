package coordinator

import "github.com/prometheus/client_golang/prometheus"

func newRackStatusSplit() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rackfence_rack_status_split_total",
		Help: "Rack status reports this leader wrote as per-host status commands because a voter does not apply the per-rack command yet (upgrade it).",
	})
}
