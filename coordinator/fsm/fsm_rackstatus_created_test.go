package fsm

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// recreatedLog is h1 and h2 in rack r1 under a lease, then h1 deleted and
// created again (with a detach intent the agent of the old h1 never saw).
// It returns the FSM, the epoch, h1's old and new createdIndex and the
// new h1's intent's createdIndex.
func recreatedLog(t *testing.T) (h *fsmT, ep, oldH1, newH1, intent uint64) {
	h = newFSMT(t)
	oldH1 = h.ok(PutHostCmd{Host: host("h1", "r1")}).(PutHostResult).Host.CreatedIndex
	h.ok(PutHostCmd{Host: host("h2", "r1")})
	ep = h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second, Time: t0}).(wire.Lease).Epoch
	h.ok(DeleteHostCmd{Name: "h1"})
	newH1 = h.ok(PutHostCmd{Host: host("h1", "r1")}).(PutHostResult).Host.CreatedIndex
	intent = h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{Reason: "move"}}).(wire.Intent).CreatedIndex
	if oldH1 == newH1 {
		t.Fatalf("h1 created again with the same createdIndex %d", oldH1)
	}
	return h, ep, oldH1, newH1, intent
}

// TestRackStatusRefusesAnotherHostOfTheName: a rack report naming the
// createdIndex of a host deleted and created since under the same name is
// refused for that host (not_found, naming the field) and writes nothing
// of it: no status, ack, event, removal nor touch; the other hosts of the
// report are written. With the new host's createdIndex, or with none (an
// older agent), the write lands.
func TestRackStatusRefusesAnotherHostOfTheName(t *testing.T) {
	h, ep, oldH1, newH1, intent := recreatedLog(t)
	st := &wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK,
		HardwareDetails: &wire.HardwareDetails{SerialNumber: "SN-OLD"}}
	before, _ := h.f.Host("h1")
	h2, _ := h.f.Host("h2")
	res := h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{
		{Name: "h1", Created: oldH1, Status: st, Acks: []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: intent}},
			Events: []wire.Event{{Reason: "Provisioned", Message: "old host"}}},
		{Name: "h2", Created: h2.CreatedIndex, Status: st},
	}}).(wire.RackStatusResult)
	r := res.Hosts[0]
	if r.Error == nil || r.Error.Code != wire.CodeNotFound || !strings.Contains(r.Error.Message, "created") || r.ModifiedIndex != 0 {
		t.Fatalf("h1 of the old incarnation: %+v (error %+v), want not_found naming created", r, r.Error)
	}
	if r := res.Hosts[1]; r.Error != nil || r.ModifiedIndex != res.Index {
		t.Fatalf("h2 in the same report: %+v (error %+v)", r, r.Error)
	}
	after, _ := h.f.Host("h1")
	if after.Status != nil || after.ModifiedIndex != before.ModifiedIndex || after.Intents.Detach.Acknowledged ||
		len(eventsOf(h.f.s.Hosts["h1"].Events)) != 0 {
		t.Fatalf("the refused report wrote to the new h1: %+v status %+v intents %+v events %+v",
			after, after.Status, after.Intents, eventsOf(h.f.s.Hosts["h1"].Events))
	}
	if h2, _ := h.f.Host("h2"); h2.Status == nil || h2.Status.ProvisioningState != wire.StateProvisioned {
		t.Fatalf("h2 not written: %+v", h2.Status)
	}
	// A removal of the old host: the new one stays.
	rm := h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Created: oldH1, Remove: true}}}).(wire.RackStatusResult)
	if r := rm.Hosts[0]; r.Error == nil || r.Removed {
		t.Fatalf("removal of the old h1: %+v", r)
	}
	if _, ok := h.f.Host("h1"); !ok {
		t.Fatal("the old host's removal removed the new h1")
	}
	// The new host's createdIndex: written; a touch of the old one refused.
	ok := h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{
		{Name: "h1", Created: newH1, Status: &wire.HostStatus{ProvisioningState: wire.StateRegistering}}}}).(wire.RackStatusResult)
	if r := ok.Hosts[0]; r.Error != nil {
		t.Fatalf("h1 with its own createdIndex: %+v", r.Error)
	}
	base := ok.Hosts[0].ModifiedIndex
	touch := h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0.Add(time.Minute), Hosts: []wire.RackHostReport{
		{Name: "h1", Touch: base, Created: oldH1}}}).(wire.RackStatusResult)
	if r := touch.Hosts[0]; r.Error == nil || r.Error.Code != wire.CodeNotFound {
		t.Fatalf("touch naming the old h1: %+v", r)
	}
	if got, _ := h.f.Host("h1"); !got.Status.LastUpdated.Equal(t0) {
		t.Fatalf("the refused touch refreshed h1: %+v", got.Status)
	}
	// None named (an older agent): written, as before the check.
	none := h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{
		{Name: "h1", Status: &wire.HostStatus{ProvisioningState: wire.StateInspecting}}}}).(wire.RackStatusResult)
	if r := none.Hosts[0]; r.Error != nil {
		t.Fatalf("h1 without createdIndex: %+v", r.Error)
	}
	if got, _ := h.f.Host("h1"); got.Status.ProvisioningState != wire.StateInspecting {
		t.Fatalf("h1: %+v", got.Status)
	}
}

// TestRackStatusCreatedBodyVersion: a report naming a createdIndex is body
// version 3 and decodes with it; one naming none is version 2 with no
// trace of the field (older binaries apply it, and its bytes are what
// they were); a version 2 body is applied without the check even if it
// carries the field (every member applies it alike, as a binary from
// before the check does); WithoutCreated is the version 2 form.
func TestRackStatusCreatedBodyVersion(t *testing.T) {
	st := &wire.HostStatus{ProvisioningState: wire.StateAvailable}
	plain := RackStatusCmd{Rack: "r1", Epoch: 4, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Status: st}, {Name: "h2", Touch: 3}}}
	named := RackStatusCmd{Rack: "r1", Epoch: 4, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Created: 7, Status: st}, {Name: "h2", Touch: 3, Created: 9}}}
	pb, err := Encode(plain)
	if err != nil {
		t.Fatal(err)
	}
	if pb[1] != BodyBinary || bytes.Contains(pb, []byte("created")) {
		t.Fatalf("a report naming no createdIndex: version %d, body %q", pb[1], pb)
	}
	nb, err := Encode(named)
	if err != nil {
		t.Fatal(err)
	}
	if nb[1] != RackStatusCreatedVersion || commandVersions[CmdRackStatus] < RackStatusCreatedVersion {
		t.Fatalf("a report naming createdIndex: version %d, table %d", nb[1], commandVersions[CmdRackStatus])
	}
	got, err := Decode(nb)
	if err != nil {
		t.Fatal(err)
	}
	if hs := got.(RackStatusCmd).Hosts; hs[0].Created != 7 || hs[1].Created != 9 || hs[1].Touch != 3 || hs[0].Status == nil {
		t.Fatalf("decoded: %+v", hs)
	}
	w := named.WithoutCreated()
	if named.Hosts[0].Created != 7 || w.CreatedChecked() {
		t.Fatalf("WithoutCreated changed its receiver or kept the field: %+v %+v", named.Hosts, w.Hosts)
	}
	if wb, _ := Encode(w); !bytes.Equal(wb, pb) {
		t.Fatalf("WithoutCreated encodes as\n%q, want the plain report's\n%q", wb, pb)
	}
	// A v2 body carrying the field (no leader writes one) decodes without it.
	v2 := bytes.Clone(nb)
	v2[1] = BodyBinary
	got, err = Decode(v2)
	if err != nil {
		t.Fatal(err)
	}
	if got.(RackStatusCmd).CreatedChecked() {
		t.Fatalf("a v2 body kept createdIndex: %+v", got.(RackStatusCmd).Hosts)
	}
	h, ep, oldH1, _, _ := recreatedLog(t)
	c := RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Created: oldH1, Status: st}}}
	b, _ := Encode(c)
	b[1] = BodyBinary
	h.index++
	r := h.f.Apply(h.index, b).(Result)
	if r.Err != nil || r.Value.(wire.RackStatusResult).Hosts[0].Error != nil {
		t.Fatalf("a v2 body was checked: %v %+v", r.Err, r.Value)
	}
}

// TestStatusCmdOfChecksCreated: the leader's split of a report into
// per-host commands (a voter lacks type 22) refuses, at the time it
// reads, a host named with another createdIndex, full write or touch;
// with the host's own or none, the command is made.
func TestStatusCmdOfChecksCreated(t *testing.T) {
	h, ep, oldH1, newH1, _ := recreatedLog(t)
	c := RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0}
	st := &wire.HostStatus{ProvisioningState: wire.StateProvisioned}
	for _, r := range []wire.RackHostReport{{Name: "h1", Created: oldH1, Status: st}, {Name: "h1", Created: oldH1, Remove: true}} {
		if _, err := h.f.StatusCmdOf(c, &r); err == nil || ErrorDetail(err).Code != wire.CodeNotFound {
			t.Fatalf("split of %+v naming the old h1: %v", r, err)
		}
	}
	for _, r := range []wire.RackHostReport{{Name: "h1", Created: newH1, Status: st}, {Name: "h1", Status: st}} {
		cmd, err := h.f.StatusCmdOf(c, &r)
		if err != nil || cmd.Report.Status.ProvisioningState != wire.StateProvisioned {
			t.Fatalf("split of %+v: %+v %v", r, cmd, err)
		}
	}
}

// TestRackStatusCreatedLeavesNoTrace: a report naming the host's own
// createdIndex leaves the same state (snapshot) as one naming none: the
// field is checked, never stored.
func TestRackStatusCreatedLeavesNoTrace(t *testing.T) {
	a, ep, _, newH1, _ := recreatedLog(t)
	b, _, _, _, _ := recreatedLog(t)
	st := &wire.HostStatus{ProvisioningState: wire.StateAvailable}
	a.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Created: newH1, Status: st}}})
	b.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Status: st}}})
	if a.f.snapshot().sum() != b.f.snapshot().sum() {
		t.Fatal("a report naming createdIndex left another state than one naming none")
	}
}
