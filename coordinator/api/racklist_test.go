package api

import (
	"reflect"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestRackListCounts: GET /v1/racks counts each rack's hosts by state and
// status ("none" before a report) and those with an unacknowledged
// intent, and gives the leader's time left on a held lease.
func TestRackListCounts(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	viewer := newToken(t, u, admin, wire.RoleViewer, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	must(t, 201, "PUT", u+"/v1/credentials/c1", admin, wire.Credentials{Username: "admin", Password: "password"}, nil)
	for _, h := range []struct{ name, rack string }{{"h1", "r1"}, {"h2", "r1"}, {"h3", "r1"}, {"h4", "r2"}} {
		must(t, 201, "PUT", u+"/v1/hosts/"+h.name, op, testHost(h.name, h.rack), nil)
	}
	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", TTL: wire.Duration(time.Minute)}, &l)
	report := func(name, state, status string) {
		rep := wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{ProvisioningState: state, OperationalStatus: status}}
		if status == wire.OpError {
			rep.Status.ErrorType, rep.Status.ErrorMessage, rep.Status.ErrorCount = wire.ErrPowerManagement, "power-on failed", 1
		}
		must(t, 200, "PUT", u+"/v1/hosts/"+name+"/status", agent, rep, nil)
	}
	report("h1", wire.StateAvailable, wire.OpOK)
	report("h2", wire.StateAvailable, wire.OpError)
	must(t, 200, "POST", u+"/v1/hosts/h1/intents/detach", op, wire.IntentRequest{Reason: "counts"}, nil)

	var racks wire.List[wire.Rack]
	must(t, 200, "GET", u+"/v1/racks", viewer, nil, &racks)
	if len(racks.Items) != 2 {
		t.Fatalf("racks: %+v", racks.Items)
	}
	r1, r2 := racks.Items[0], racks.Items[1]
	want1 := wire.RackHostCounts{States: map[string]int{"available": 2, "none": 1}, Statuses: map[string]int{"ok": 1, "error": 1, "none": 1}, Unacknowledged: 1}
	if r1.Name != "r1" || r1.Hosts != 3 || !reflect.DeepEqual(r1.Counts, want1) {
		t.Errorf("r1: %+v, want counts %+v", r1, want1)
	}
	if r1.ExpiresIn == nil || time.Duration(*r1.ExpiresIn) <= 0 || time.Duration(*r1.ExpiresIn) > 2*time.Minute {
		t.Errorf("r1 is held: expiresIn %v, want the leader's time left (0 < left ≤ TTL + margin)", r1.ExpiresIn)
	}
	want2 := wire.RackHostCounts{States: map[string]int{"none": 1}, Statuses: map[string]int{"none": 1}}
	if r2.Name != "r2" || r2.ExpiresIn != nil || !reflect.DeepEqual(r2.Counts, want2) {
		t.Errorf("r2 (no lease): %+v, want counts %+v and no expiresIn", r2, want2)
	}
}
