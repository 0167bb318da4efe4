package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// A renewal that keeps holder, epoch and TTL moves the rack's Index (the
// replicated state) but answers no watcher; any other change does.
func TestRenewalWakesNoWatcher(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(wire.Lease)
	renew := LeaseRenewCmd{Rack: "r1", Holder: "a", Epoch: l.Epoch, TTL: 10 * time.Second}
	at := h.index
	h.ok(renew)
	h.ok(renew)
	if r := h.f.s.Racks["r1"]; r.Index != h.index || r.Lease.RenewIndex != h.index {
		t.Fatalf("the renewal did not move the rack's state: index %d, renewIndex %d, want %d", r.Index, r.Lease.RenewIndex, h.index)
	}
	if resp, ok := h.f.changes("r1", at); ok || resp.Lease == nil || resp.Lease.Epoch != l.Epoch {
		t.Fatalf("renewals answered a rack watch: changed=%v %+v", ok, resp)
	}
	if resp, ok := h.f.fleetChanges(at); ok || len(resp.Racks) != 0 {
		t.Fatalf("renewals answered the fleet watch: changed=%v %+v", ok, resp)
	}
	// A change after quiet renewals is seen, by a watcher from before them
	// and by one from between them.
	h.ok(PutHostCmd{Host: host("h2", "r1")})
	for _, after := range []uint64{at, at + 1} {
		resp, ok := h.f.changes("r1", after)
		if !ok || len(resp.Hosts) != 1 || resp.Hosts[0].Name != "h2" {
			t.Fatalf("after %d: a host change following renewals: changed=%v %+v", after, ok, resp)
		}
	}
	// A renewal that changes the TTL changes what the watch answers.
	at = h.index
	renew.TTL = 20 * time.Second
	h.ok(renew)
	if resp, ok := h.f.changes("r1", at); !ok || resp.Lease == nil || resp.Lease.TTL != wire.Duration(20*time.Second) {
		t.Fatalf("a renewal with a new TTL: changed=%v %+v", ok, resp)
	}
}

// In one batch entry, a renewal before or after a host change leaves the
// host change visible.
func TestRenewalInBatchKeepsChangeVisible(t *testing.T) {
	for _, renewFirst := range []bool{true, false} {
		h := newFSMT(t)
		h.ok(PutHostCmd{Host: host("h1", "r1")})
		l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(wire.Lease)
		h.ok(LeaseRenewCmd{Rack: "r1", Holder: "a", Epoch: l.Epoch, TTL: 10 * time.Second})
		at := h.index
		cmds := []Command{PutHostCmd{Host: host("h2", "r1")}, LeaseRenewCmd{Rack: "r1", Holder: "a", Epoch: l.Epoch, TTL: 10 * time.Second}}
		if renewFirst {
			cmds[0], cmds[1] = cmds[1], cmds[0]
		}
		for _, r := range h.applyBatch(cmds...) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		resp, ok := h.f.changes("r1", at)
		if !ok || len(resp.Hosts) != 1 || resp.Hosts[0].Name != "h2" {
			t.Fatalf("renew first %v: changed=%v %+v", renewFirst, ok, resp)
		}
		// And the next quiet renewal hides nothing from a watcher that
		// has not seen this entry.
		h.ok(LeaseRenewCmd{Rack: "r1", Holder: "a", Epoch: l.Epoch, TTL: 10 * time.Second})
		if _, ok := h.f.changes("r1", at); !ok {
			t.Fatalf("renew first %v: a renewal after the batch hid its host change", renewFirst)
		}
		if _, ok := h.f.changes("r1", h.index-1); ok {
			t.Fatalf("renew first %v: the last renewal answered a watcher that saw the batch", renewFirst)
		}
	}
}

// After a snapshot restore (the indexes watchers see not known) a quiet
// renewal still answers no watch, with statuses or without: what watchers
// saw stays at the restored Index.
func TestRenewalAfterRestoreWakesNoWatcher(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(wire.Lease)
	var buf bytes.Buffer
	if err := h.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	g := newFSMT(t)
	if err := g.f.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	g.index = h.index
	at := g.index
	renew := LeaseRenewCmd{Rack: "r1", Holder: "a", Epoch: l.Epoch, TTL: 10 * time.Second}
	g.ok(renew)
	g.ok(renew)
	for _, withStatus := range []bool{true, false} {
		if resp, ok := g.f.changesOf("r1", at, withStatus); ok {
			t.Fatalf("with statuses %v: renewals after a restore answered a watch: %+v", withStatus, resp)
		}
		if _, ok := g.f.changesOf("r1", at-1, withStatus); !ok {
			t.Fatalf("with statuses %v: after a restore and renewals a watch missed the lease", withStatus)
		}
	}
}
