package agent

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestStoreUpsertRecreatedHost: a host of a known name with another
// createdIndex (deleted and created again) replaces the entry: nothing of
// the old host's (status, pending removal) is kept, and the status comes
// from the answer as for a host seen for the first time. The same host
// (same createdIndex, or one not known: 0) keeps the agent's own status.
func TestStoreUpsertRecreatedHost(t *testing.T) {
	s := newStore()
	s.upsert(wire.Host{Name: "x", CreatedIndex: 5, Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable}})
	old := s.entry("x", func(e *hostEntry) {
		e.status = &wire.HostStatus{ProvisioningState: wire.StateDeleting}
		e.pendingRemove = true
	})

	for _, idx := range []uint64{0, 5} {
		s.upsert(wire.Host{Name: "x", CreatedIndex: idx, Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable}})
		s.with("x", func(e *hostEntry) {
			if e != old || e.status.ProvisioningState != wire.StateDeleting || !e.pendingRemove {
				t.Errorf("createdIndex %d: the same host lost the agent's state: %+v", idx, e)
			}
		})
	}

	if !s.upsert(wire.Host{Name: "x", CreatedIndex: 9}) {
		t.Fatal("a re-created host is not reported as a change")
	}
	s.with("x", func(e *hostEntry) {
		if e == old || e.status != nil || e.pendingRemove {
			t.Errorf("re-created host kept the old one's state: status %+v, pending removal %v", e.status, e.pendingRemove)
		}
	})
	if s.withEntry("x", old, func(*hostEntry) {}) {
		t.Error("withEntry ran on the old host's entry after the re-creation")
	}
	s.removeEntry("x", old)
	if !s.with("x", func(*hostEntry) {}) {
		t.Error("removing the old host's entry removed the new host")
	}

	s.upsert(wire.Host{Name: "y", CreatedIndex: 3})
	s.upsert(wire.Host{Name: "y", CreatedIndex: 4, Status: &wire.HostStatus{ProvisioningState: wire.StateProvisioned}})
	s.with("y", func(e *hostEntry) {
		if e.status == nil || e.status.ProvisioningState != wire.StateProvisioned {
			t.Errorf("re-created host with a status in the answer: status %+v, want the answer's", e.status)
		}
	})
}

// TestStoreFirstNew: a status-less answer needs asking again with
// statuses for a host whose status it left out that the store does not
// hold, or holds as another host of the same name (re-created, e.g.
// pivoted back in); not for a held host, nor for one without a status.
func TestStoreFirstNew(t *testing.T) {
	s := newStore()
	s.upsert(wire.Host{Name: "a", CreatedIndex: 1})
	s.upsert(wire.Host{Name: "b", CreatedIndex: 2})
	for _, c := range []struct {
		name string
		resp wire.WatchResponse
		want string
	}{
		{"held hosts", wire.WatchResponse{Hosts: []wire.Host{{Name: "a", CreatedIndex: 1}, {Name: "b", CreatedIndex: 2}}, StatusOmitted: []string{"a", "b"}}, ""},
		{"re-created, status left out", wire.WatchResponse{Hosts: []wire.Host{{Name: "a", CreatedIndex: 1}, {Name: "b", CreatedIndex: 7}}, StatusOmitted: []string{"a", "b"}}, "b"},
		{"re-created without a status", wire.WatchResponse{Hosts: []wire.Host{{Name: "a", CreatedIndex: 1}, {Name: "b", CreatedIndex: 7}}, StatusOmitted: []string{"a"}}, ""},
		{"unknown", wire.WatchResponse{Hosts: []wire.Host{{Name: "a", CreatedIndex: 1}, {Name: "c", CreatedIndex: 8}}, StatusOmitted: []string{"a", "c"}}, "c"},
		{"unknown, names out of order", wire.WatchResponse{Hosts: []wire.Host{{Name: "a", CreatedIndex: 1}, {Name: "c", CreatedIndex: 8}}, StatusOmitted: []string{"c", "a"}}, "c"},
		{"whole hosts (older coordinator)", wire.WatchResponse{Hosts: []wire.Host{{Name: "c", CreatedIndex: 8}}}, ""},
	} {
		if got := s.firstNew(&c.resp); got != c.want {
			t.Errorf("%s: firstNew %q, want %q", c.name, got, c.want)
		}
	}
}
