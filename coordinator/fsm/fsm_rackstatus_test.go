package fsm

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// rackStatusLog is a rack report's log: hosts, a lease, then a report with
// a full write, a touch, another rack's host and a missing one, then a
// touch of the written host. It returns the FSM and the lease epoch.
func rackStatusLog(t *testing.T) (*fsmT, uint64, []wire.RackStatusResult) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	h.ok(PutHostCmd{Host: host("h2", "r1")})
	h.ok(PutHostCmd{Host: host("x1", "r2")})
	ep := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second, Time: t0}).(wire.Lease).Epoch
	st := &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: true}
	var out []wire.RackStatusResult
	out = append(out, h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{
		{Name: "h1", Status: st, Events: []wire.Event{{Reason: "Registered", Message: "m"}}},
		{Name: "h2", Status: st},
		{Name: "x1", Status: st},
		{Name: "nope", Status: st},
	}}).(wire.RackStatusResult))
	base := out[0].Hosts[0].ModifiedIndex
	out = append(out, h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0.Add(time.Minute), Hosts: []wire.RackHostReport{
		{Name: "h1", Touch: base},
		{Name: "h2", Touch: base - 1}, // a stale base
	}}).(wire.RackStatusResult))
	return h, ep, out
}

// TestRackStatusAppliesEachHostOnItsOwn: one entry writes every host of the
// rack; a host of another rack and a missing one are refused by name
// without failing the others; a touch refreshes epoch and lastUpdated
// only, keeps modifiedIndex and does not wake the rack's watchers; a
// touch whose base is not the host's modifiedIndex is refused (conflict).
func TestRackStatusAppliesEachHostOnItsOwn(t *testing.T) {
	h, ep, out := rackStatusLog(t)
	full, touch := out[0], out[1]
	want := []struct {
		name, code string
	}{{"h1", ""}, {"h2", ""}, {"x1", wire.CodeForbidden}, {"nope", wire.CodeNotFound}}
	for i, w := range want {
		r := full.Hosts[i]
		if r.Name != w.name || (r.Error == nil) != (w.code == "") || (r.Error != nil && r.Error.Code != w.code) {
			t.Errorf("host %d: %+v (error %+v), want %s %q", i, r, r.Error, w.name, w.code)
		}
		if w.code == "" && r.ModifiedIndex != full.Index {
			t.Errorf("host %s: modifiedIndex %d, want the entry's %d", w.name, r.ModifiedIndex, full.Index)
		}
	}
	h1, _ := h.f.Host("h1")
	if h1.Status == nil || h1.Status.Epoch != ep || !h1.Status.LastUpdated.Equal(t0.Add(time.Minute)) ||
		h1.ModifiedIndex != full.Index || h1.Status.ProvisioningState != wire.StateAvailable {
		t.Fatalf("h1 after the touch: %+v %+v", h1, h1.Status)
	}
	if ev := eventsOf(h.f.s.Hosts["h1"].Events); len(ev) != 1 || ev[0].Index != full.Index {
		t.Fatalf("h1 events: %+v", ev)
	}
	if r := touch.Hosts[0]; r.Error != nil || r.ModifiedIndex != full.Index {
		t.Fatalf("touch of h1: %+v", r)
	}
	if r := touch.Hosts[1]; r.Error == nil || r.Error.Code != wire.CodeConflict {
		t.Fatalf("touch of h2 with a stale base: %+v", r)
	}
	if h2, _ := h.f.Host("h2"); !h2.Status.LastUpdated.Equal(t0) {
		t.Fatalf("the refused touch changed h2: %+v", h2.Status)
	}
	if _, woke := h.f.changes("r1", full.Index); woke {
		t.Fatal("a touch woke the rack's watchers")
	}
}

// TestRackStatusIsDeterministic: two FSMs applying the same log end with
// the same snapshot.
func TestRackStatusIsDeterministic(t *testing.T) {
	a, _, _ := rackStatusLog(t)
	b, _, _ := rackStatusLog(t)
	if a.f.snapshot().sum() != b.f.snapshot().sum() {
		t.Fatal("two FSMs applying the same rack status log differ")
	}
}

// TestRackStatusStaleEpochRefusesAll: a report under a stale epoch (or with
// no lease) writes nothing.
func TestRackStatusStaleEpochRefusesAll(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	st := &wire.HostStatus{ProvisioningState: wire.StateAvailable}
	rep := func(ep uint64) RackStatusCmd {
		return RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Status: st}}}
	}
	h.refused(rep(1), wire.CodeStaleEpoch) // no lease
	ep := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(wire.Lease).Epoch
	h.refused(rep(ep+1), wire.CodeStaleEpoch)
	if h1, _ := h.f.Host("h1"); h1.Status != nil {
		t.Fatalf("a stale report wrote: %+v", h1.Status)
	}
	h.ok(rep(ep))
}
