package api

import (
	"net/http"
	"testing"
)

// BenchmarkHostListRestart is what a list that outlived its view costs
// the coordinator to finish, 10,000 fleet-shaped hosts as summaries in
// pages of 500, the view gone after host 6,000: "from-start" reads the new
// list from its first page (what a client without after= does, skipping
// the hosts it gave), "after" starts it after the last host given
// (GET /v1/hosts?after=NAME). Time and bytes written per restart.
//
//	go test -run '^$' -bench HostListRestart -benchmem ./coordinator/api/
func BenchmarkHostListRestart(b *testing.B) {
	const n, limit, given = 10000, 500, 6000
	f := benchFleet(b, n)
	last := f.HostsView("").At(given - 1).Name
	for _, mode := range []string{"from-start", "after"} {
		b.Run(mode, func(b *testing.B) {
			q := &hostQuery{summary: true, page: pageReq{Limit: limit}}
			var wrote, pages int
			b.ReportAllocs()
			for range b.N {
				v := f.HostsView("")
				start := 0
				if mode == "after" {
					start = v.After(last)
				}
				wrote, pages = 0, 0
				for {
					w := &writeMeter{h: http.Header{}}
					more := writeHostPage(w, v, start, q)
					wrote += w.total
					pages++
					if !more {
						break
					}
					start += limit
				}
			}
			b.ReportMetric(float64(wrote), "B/restart")
			b.ReportMetric(float64(pages), "pages/restart")
		})
	}
}
