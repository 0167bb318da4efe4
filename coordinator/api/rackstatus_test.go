package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

var availableStatus = &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: true}

// TestRackStatusReport: POST /v1/racks/{rack}/status writes every valid
// host of the rack, refuses by name a host of another rack, a missing one
// and one that fails validation (the field is its path in the body),
// refuses the whole report under a stale epoch, and answers touches
// without waking the rack's watch.
func TestRackStatusReport(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	agent2 := newToken(t, u, admin, wire.RoleAgent, "r2")
	for _, h := range []wire.Host{testHost("h1", "r1"), testHost("h2", "r1"), testHost("h3", "r1"), testHost("x1", "r2")} {
		must(t, 201, "PUT", u+"/v1/hosts/"+h.Name, op, h, nil)
	}
	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1"}, &l)
	path := u + "/v1/racks/r1/status"

	rep := wire.RackStatusReport{Epoch: l.Epoch, Hosts: []wire.RackHostReport{
		{Name: "h1", Status: availableStatus},
		{Name: "h2", Touch: 7, Status: availableStatus},
		{Name: "x1", Status: availableStatus},
		{Name: "gone", Status: availableStatus},
		{Name: "h3", Status: availableStatus},
		{Name: "h1", Status: availableStatus},
	}}
	var res wire.RackStatusResult
	must(t, 200, "POST", path, agent, rep, &res)
	want := []struct{ code, field string }{
		{"", ""}, {wire.CodeBadRequest, "hosts[1].touch"}, {wire.CodeForbidden, ""},
		{wire.CodeNotFound, ""}, {"", ""}, {wire.CodeBadRequest, "hosts[5].name"},
	}
	if len(res.Hosts) != len(want) || res.Index == 0 {
		t.Fatalf("answer: %+v", res)
	}
	for i, w := range want {
		r := res.Hosts[i]
		if r.Name != rep.Hosts[i].Name {
			t.Errorf("result %d names %s, want %s", i, r.Name, rep.Hosts[i].Name)
		}
		switch {
		case w.code == "" && (r.Error != nil || r.ModifiedIndex != res.Index):
			t.Errorf("host %d (%s): %+v error %+v, want written at %d", i, r.Name, r, r.Error, res.Index)
		case w.code != "" && (r.Error == nil || r.Error.Code != w.code || r.Error.Field != w.field):
			t.Errorf("host %d (%s): error %+v, want %s on %q", i, r.Name, r.Error, w.code, w.field)
		}
	}
	var h1 wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", op, nil, &h1)
	if h1.Status == nil || h1.Status.ProvisioningState != wire.StateAvailable || h1.Status.Epoch != l.Epoch {
		t.Fatalf("h1 after the report: %+v", h1.Status)
	}

	// A touch refreshes lastUpdated and wakes no watcher.
	time.Sleep(10 * time.Millisecond)
	touch := wire.RackStatusReport{Epoch: l.Epoch, Hosts: []wire.RackHostReport{{Name: "h1", Touch: res.Hosts[0].ModifiedIndex}, {Name: "h3", Touch: 1}}}
	var tr wire.RackStatusResult
	must(t, 200, "POST", path, agent, touch, &tr)
	if tr.Hosts[0].Error != nil || tr.Hosts[0].ModifiedIndex != res.Index || tr.Hosts[1].Error == nil || tr.Hosts[1].Error.Code != wire.CodeConflict {
		t.Fatalf("touch answer: %+v %+v", tr.Hosts[0], tr.Hosts[1].Error)
	}
	var h1b wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", op, nil, &h1b)
	if !h1b.Status.LastUpdated.After(h1.Status.LastUpdated) || h1b.ModifiedIndex != h1.ModifiedIndex {
		t.Fatalf("touch: lastUpdated %s → %s, modifiedIndex %d → %d", h1.Status.LastUpdated, h1b.Status.LastUpdated, h1.ModifiedIndex, h1b.ModifiedIndex)
	}
	var w wire.WatchResponse
	must(t, 200, "GET", fmt.Sprintf("%s/v1/watch?rack=r1&index=%d&timeout=1s", u, res.Index), agent, nil, &w)
	if len(w.Hosts) != 0 {
		t.Fatalf("a watch after the full write answered hosts after a touch: %+v", w.Hosts)
	}

	// A stale epoch refuses everything; another rack's agent is forbidden.
	stale := wire.RackStatusReport{Epoch: l.Epoch + 1, Hosts: []wire.RackHostReport{{Name: "h3", Status: &wire.HostStatus{ProvisioningState: wire.StateInspecting}}}}
	if d := errBody(t, must(t, 409, "POST", path, agent, stale, nil)); d.Code != wire.CodeStaleEpoch {
		t.Fatal(d)
	}
	var h3 wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h3", op, nil, &h3)
	if h3.Status.ProvisioningState != wire.StateAvailable {
		t.Fatalf("a stale report wrote h3: %+v", h3.Status)
	}
	must(t, 403, "POST", path, agent2, rep, nil)

	// Whole-report validation.
	if d := errBody(t, must(t, 400, "POST", path, agent, wire.RackStatusReport{Hosts: rep.Hosts}, nil)); d.Field != "epoch" {
		t.Fatal(d)
	}
	if d := errBody(t, must(t, 400, "POST", path, agent, wire.RackStatusReport{Epoch: l.Epoch}, nil)); d.Field != "hosts" {
		t.Fatal(d)
	}
	many := wire.RackStatusReport{Epoch: l.Epoch, Hosts: make([]wire.RackHostReport, MaxRackStatusHosts+1)}
	if d := errBody(t, must(t, 400, "POST", path, agent, many, nil)); d.Field != "hosts" {
		t.Fatal(d)
	}
	badName := wire.RackStatusReport{Epoch: l.Epoch, Hosts: []wire.RackHostReport{{Name: "h1", Touch: res.Index}, {Name: "Bad Name", Status: availableStatus}}}
	must(t, 200, "POST", path, agent, badName, &tr)
	if e := tr.Hosts[1].Error; e == nil || e.Field != "hosts[1].name" || tr.Hosts[0].Error != nil || tr.Index == 0 {
		t.Fatalf("a bad name: %+v %+v", tr, e)
	}
	big := `{"epoch":1,"hosts":[{"name":"h1","status":{"errorMessage":"` + strings.Repeat("x", MaxRackStatusBody) + `"}}]}`
	if d := errBody(t, must(t, http.StatusRequestEntityTooLarge, "POST", path, agent, []byte(big), nil)); d.Code != wire.CodeTooLarge {
		t.Fatal(d)
	}
}

// TestValidateRackHostNamesTheField: a host's refusal names the field by
// its path in the body. (Called directly: such a body does not match the
// OpenAPI schema, which the test servers check every accepted request
// against.)
func TestValidateRackHostNamesTheField(t *testing.T) {
	for _, c := range []struct {
		h     wire.RackHostReport
		field string
	}{
		{wire.RackHostReport{Name: "h1", Status: &wire.HostStatus{ProvisioningState: "flying"}}, "hosts[3].status.provisioningState"},
		{wire.RackHostReport{Name: "h1", Status: availableStatus, Acks: []wire.IntentAck{{Kind: "fly", CreatedIndex: 1}}}, "hosts[3].acks[0].kind"},
		{wire.RackHostReport{Name: "h1", Status: availableStatus, Events: []wire.Event{{}}}, "hosts[3].events[0].reason"},
		{wire.RackHostReport{Name: "h1"}, "hosts[3].status"},
		{wire.RackHostReport{Name: "h1", Touch: 4, Remove: true}, "hosts[3].touch"},
		{wire.RackHostReport{Name: "h9", Status: availableStatus}, "hosts[3].name"}, // named before
		{wire.RackHostReport{Name: "", Touch: 4}, "hosts[3].name"},
	} {
		err := validateRackHost(&c.h, 3, map[string]bool{"h9": true})
		if d := refusal(err); err == nil || d.Field != c.field || d.Code != wire.CodeBadRequest {
			t.Errorf("%+v: %v, want a refusal of %s", c.h, err, c.field)
		}
	}
	if err := validateRackHost(&wire.RackHostReport{Name: "h1", Touch: 4}, 0, map[string]bool{}); err != nil {
		t.Errorf("a touch: %v", err)
	}
	if err := validateRackHost(&wire.RackHostReport{Name: "h1", Remove: true}, 0, map[string]bool{}); err != nil {
		t.Errorf("a removal without status: %v", err)
	}
}

// TestRackStatusCreated: a host named with another createdIndex than its
// record's (deleted and created again since) is refused (not_found) and
// not written; with its own, it is written.
func TestRackStatusCreated(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	h1 := testHost("h1", "r1")
	must(t, 201, "PUT", u+"/v1/hosts/h1", admin, h1, nil)
	var old wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", admin, nil, &old)
	must(t, 200, "DELETE", u+"/v1/hosts/h1", admin, nil, nil)
	must(t, 201, "PUT", u+"/v1/hosts/h1", admin, h1, nil)
	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1"}, &l)
	var res wire.RackStatusResult
	must(t, 200, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l.Epoch,
		Hosts: []wire.RackHostReport{{Name: "h1", Created: old.CreatedIndex, Status: availableStatus}}}, &res)
	if e := res.Hosts[0].Error; e == nil || e.Code != wire.CodeNotFound || !strings.Contains(e.Message, "created") {
		t.Fatalf("the old h1's report: %+v", res.Hosts[0])
	}
	var now wire.Host
	must(t, 200, "GET", u+"/v1/hosts/h1", admin, nil, &now)
	if now.Status != nil || now.CreatedIndex == old.CreatedIndex {
		t.Fatalf("the new h1 after the old one's report: %+v", now)
	}
	var res2 wire.RackStatusResult
	must(t, 200, "POST", u+"/v1/racks/r1/status", agent, wire.RackStatusReport{Epoch: l.Epoch,
		Hosts: []wire.RackHostReport{{Name: "h1", Created: now.CreatedIndex, Status: availableStatus}}}, &res2)
	if res2.Hosts[0].Error != nil {
		t.Fatalf("the new h1's report: %+v", res2.Hosts[0].Error)
	}
}
