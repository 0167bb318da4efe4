package bench

import (
	"fmt"
	"sort"
	"strings"
)

// requestCounts is the coordinator's rackfence_http_requests_total summed
// over status codes, by "METHOD route". What it answered so far: the
// difference of two scrapes is what a phase cost in requests.
func (f *fleet) requestCounts() (map[string]float64, error) {
	m := map[string]float64{}
	err := f.metrics(func(name, labels string, v float64) {
		if name != "rackfence_http_requests_total" {
			return
		}
		route, _ := labelValue(labels, "route")
		method, _ := labelValue(labels, "method")
		m[method+" "+route] += v
	})
	return m, err
}

// subCounts is b − a per key (a key missing from a counts as 0).
func subCounts(b, a map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(b))
	for k, v := range b {
		if d := v - a[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// formatRoutes lists the routes of m, largest first, each divided by div,
// at most n of them and the rest summed ("" when m is empty). The
// /metrics scrapes of the run itself are left out.
func formatRoutes(m map[string]float64, div float64, n int) string {
	type kv struct {
		k string
		v float64
	}
	var all []kv
	total := 0.0
	for k, v := range m {
		if strings.HasSuffix(k, " /metrics") {
			continue
		}
		all = append(all, kv{k, v / div})
		total += v / div
	}
	if len(all) == 0 {
		return ""
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	parts := []string{}
	rest := 0.0
	for i, x := range all {
		if i < n {
			parts = append(parts, fmt.Sprintf("%s %.2f", x.k, x.v))
		} else {
			rest += x.v
		}
	}
	if rest > 0 {
		parts = append(parts, fmt.Sprintf("other %.2f", rest))
	}
	return fmt.Sprintf("%.2f: %s", total, strings.Join(parts, ", "))
}
