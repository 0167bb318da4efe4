package api

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestRackWatchWithoutStatus: status=false leaves every host's status out
// of a rack watch and names in statusOmitted exactly the hosts that have
// one (not a host created with none yet); absent or true answers whole
// hosts without the list; the stored hosts keep their status; other
// values, and status=false without rack, are refused naming the field.
func TestRackWatchWithoutStatus(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	for _, name := range []string{"h1", "h2", "h3"} {
		must(t, 201, "PUT", u+"/v1/hosts/"+name, op, testHost(name, "r1"), nil)
	}
	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "agent-1", TTL: wire.Duration(time.Minute)}, &l)
	for _, name := range []string{"h1", "h3"} {
		must(t, 200, "PUT", u+"/v1/hosts/"+name+"/status", agent, wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{
			ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK,
			HardwareDetails: &wire.HardwareDetails{Manufacturer: "Contoso", MemoryMiB: 1024}}}, nil)
	}

	var without wire.WatchResponse
	must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0&status=false", agent, nil, &without)
	if len(without.Hosts) != 3 {
		t.Fatalf("hosts: %+v", without.Hosts)
	}
	for _, h := range without.Hosts {
		if h.Status != nil {
			t.Fatalf("status=false: %s has a status %+v", h.Name, h.Status)
		}
	}
	if want := []string{"h1", "h3"}; !reflect.DeepEqual(without.StatusOmitted, want) {
		t.Fatalf("statusOmitted %v, want %v (h2 has no status yet)", without.StatusOmitted, want)
	}
	if without.Lease == nil || without.Lease.Epoch != l.Epoch {
		t.Fatalf("lease: %+v", without.Lease)
	}

	for _, q := range []string{"", "&status=true"} {
		var whole wire.WatchResponse
		must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0"+q, agent, nil, &whole)
		if len(whole.Hosts) != 3 || whole.Hosts[0].Status == nil || whole.Hosts[0].Status.HardwareDetails == nil ||
			whole.Hosts[1].Status != nil || whole.Hosts[2].Status == nil || whole.StatusOmitted != nil {
			t.Fatalf("%q: whole hosts, no statusOmitted: %+v", q, whole)
		}
	}
	var h1 wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", op, nil, &h1)
	if h1.Status == nil || h1.Status.HardwareDetails == nil {
		t.Fatalf("a watch with status=false changed the stored host: %+v", h1.Status)
	}

	if d := errBody(t, must(t, 400, "GET", u+"/v1/watch?rack=r1&status=no", agent, nil, nil)); d.Field != wire.ParamStatus {
		t.Fatalf("status=no: %+v", d)
	}
	if d := errBody(t, must(t, 400, "GET", u+"/v1/watch?index=0&status=false", op, nil, nil)); d.Field != wire.ParamStatus {
		t.Fatalf("status=false without rack: %+v", d)
	}
}

// TestRackWatchWithoutStatusSkipsStatusWrites: a status write alone answers
// a rack watch with statuses but not one with status=false, which waits
// until its timeout and answers no host; an intent answers both.
func TestRackWatchWithoutStatusSkipsStatusWrites(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	must(t, 201, "PUT", u+"/v1/hosts/h1", op, testHost("h1", "r1"), nil)
	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "agent-1", TTL: wire.Duration(time.Minute)}, &l)
	var first wire.WatchResponse
	must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0&status=false", agent, nil, &first)
	must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{
		ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK}}, nil)
	at := u + "/v1/watch?rack=r1&timeout=300ms&index=" + strconv.FormatUint(first.Index, 10)

	var with, without wire.WatchResponse
	must(t, 200, "GET", at, agent, nil, &with)
	if len(with.Hosts) != 1 || with.Hosts[0].Status == nil {
		t.Fatalf("a status write did not answer a watch with statuses: %+v", with)
	}
	start := time.Now()
	must(t, 200, "GET", at+"&status=false", agent, nil, &without)
	if len(without.Hosts) != 0 || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("a status write answered a status-less watch after %v: %+v", time.Since(start), without)
	}

	must(t, 200, "POST", u+"/v1/hosts/h1/intents/detach", op, wire.IntentRequest{Reason: "test"}, nil)
	must(t, 200, "GET", at+"&status=false", agent, nil, &without)
	if len(without.Hosts) != 1 || without.Hosts[0].Intents == nil || without.Hosts[0].Intents.Detach == nil {
		t.Fatalf("an intent did not answer a status-less watch: %+v", without)
	}
}
