package bmcsim

import (
	"encoding/json"
	"testing"
)

// TestTotals: GET /sim/totals (on any BMC's port) sums every BMC's Redfish
// requests by "METHOD path", a session's own path as {id}, with the body
// bytes answered, connections and logins; the per-BMC State has the same
// non-GET counts (Calls) and bytes.
func TestTotals(t *testing.T) {
	sim, err := Start(Config{Hosts: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	basic := map[string]string{"basic": "admin:password"}
	for i := range 2 {
		req(t, "GET", sim.URL(i)+v1, "", nil)
		req(t, "GET", sim.URL(i)+v1+"/Systems/1", "", basic)
	}
	r, _ := req(t, "POST", sim.URL(0)+v1+"/SessionService/Sessions", `{"UserName":"admin","Password":"password"}`, nil)
	if r.StatusCode != 201 {
		t.Fatalf("login: %d", r.StatusCode)
	}
	r, _ = req(t, "DELETE", sim.URL(0)+r.Header.Get("Location"), "", map[string]string{"X-Auth-Token": r.Header.Get("X-Auth-Token")})
	if r.StatusCode/100 != 2 {
		t.Fatalf("logout: %d", r.StatusCode)
	}
	req(t, "POST", sim.URL(1)+v1+"/Systems/1/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, basic)

	_, body := req(t, "GET", sim.URL(1)+"/sim/totals", "", nil)
	var tot Totals
	if err := json.Unmarshal(body, &tot); err != nil {
		t.Fatalf("/sim/totals: %v: %s", err, body)
	}
	want := map[string]int{"GET " + v1: 2, "GET " + v1 + "/Systems/1": 2, "POST " + v1 + "/SessionService/Sessions": 1,
		"DELETE " + v1 + "/SessionService/Sessions/{id}": 1, "POST " + v1 + "/Systems/1/Actions/ComputerSystem.Reset": 1}
	if len(tot.ByCall) != len(want) {
		t.Errorf("byCall %v, want %v", tot.ByCall, want)
	}
	for k, n := range want {
		if tot.ByCall[k] != n {
			t.Errorf("byCall[%q] = %d, want %d (all: %v)", k, tot.ByCall[k], n, tot.ByCall)
		}
	}
	s0, s1 := sim.State(0), sim.State(1)
	if tot.BMCs != 2 || tot.Requests != 7 || tot.Requests != s0.Requests+s1.Requests || tot.Logins != 1 {
		t.Errorf("totals %+v; BMC requests %d + %d, want 7 requests and 1 login over 2 BMCs", tot, s0.Requests, s1.Requests)
	}
	if tot.BytesOut <= 0 || tot.BytesOut != s0.BytesOut+s1.BytesOut {
		t.Errorf("bytesOut %d, BMCs %d + %d: want their sum, above 0", tot.BytesOut, s0.BytesOut, s1.BytesOut)
	}
	if tot.Connections < 2 {
		t.Errorf("connections %d, want at least one per BMC", tot.Connections)
	}
	if s1.Calls["POST "+v1+"/Systems/1/Actions/ComputerSystem.Reset"] != 1 || s0.Calls["POST "+v1+"/SessionService/Sessions"] != 1 {
		t.Errorf("per-BMC calls: BMC 0 %v, BMC 1 %v", s0.Calls, s1.Calls)
	}
}
