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

// TestBMCFigure: the Redfish line divides the simulators' totals by the
// hosts, largest calls first; without /sim/totals it says so.
func TestBMCFigure(t *testing.T) {
	r := FleetResult{Hosts: 10, BMCToAvailable: BMCCounts{Requests: 30, Connections: 10, Logins: 10, BytesOut: 50000,
		ByCall: map[string]float64{"GET /redfish/v1/Systems/1": 20, "POST /redfish/v1/SessionService/Sessions": 10}}}
	want := "3.00: GET /redfish/v1/Systems/1 2.00, POST /redfish/v1/SessionService/Sessions 1.00; 5.0 KB answered, 1.00 connections, 1.00 logins per host"
	if got := r.bmcFigure(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := (FleetResult{Hosts: 10}).bmcFigure(); got != "not measured" {
		t.Errorf("without counts: %q", got)
	}
}
