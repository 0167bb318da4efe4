package bench

import (
	"slices"
	"time"
)

// spread sorts lat and returns its p50, p99 and max (zeros for none):
// the latency figures every run reports.
func spread(lat []time.Duration) (p50, p99, most time.Duration) {
	n := len(lat)
	if n == 0 {
		return 0, 0, 0
	}
	slices.Sort(lat)
	return lat[n/2], lat[n*99/100], lat[n-1]
}
