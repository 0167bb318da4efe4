package bench

import "testing"

func TestFormatRoutes(t *testing.T) {
	a := map[string]float64{"POST /v1/racks/:rack/lease/renew": 100, "GET /v1/watch": 50}
	b := map[string]float64{"POST /v1/racks/:rack/lease/renew": 400, "GET /v1/watch": 50, "POST /v1/racks/:rack/status": 100,
		"GET /v1/hosts": 20, "GET /metrics": 1000}
	d := subCounts(b, a)
	if _, ok := d["GET /v1/watch"]; ok {
		t.Fatalf("an unchanged count is in the difference: %v", d)
	}
	got := formatRoutes(d, 10, 2)
	want := "42.00: POST /v1/racks/:rack/lease/renew 30.00, POST /v1/racks/:rack/status 10.00, other 2.00"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := formatRoutes(map[string]float64{"GET /metrics": 3}, 1, 5); got != "" {
		t.Fatalf("only the run's own scrapes: %q", got)
	}
}
