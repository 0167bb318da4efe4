package fsm

import (
	"context"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

func TestFleetChangesPerRack(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	h.ok(PutHostCmd{Host: host("h2", "r1")})
	h.ok(PutHostCmd{Host: host("x1", "r2")})
	resp, ok := h.f.fleetChanges(0)
	if !ok || resp.Index != 3 || len(resp.Racks) != 2 || resp.Racks[0].Rack != "r1" || len(resp.Racks[0].Hosts) != 2 || len(resp.Racks[1].Hosts) != 1 {
		t.Fatalf("index 0: %+v", resp)
	}
	if resp, ok := h.f.fleetChanges(3); ok || len(resp.Racks) != 0 {
		t.Fatalf("nothing changed after 3: %v %+v", ok, resp)
	}
	h.ok(DeleteHostCmd{Name: "h1"})
	h.ok(LeaseAcquireCmd{Rack: "r2", Holder: "a", TTL: time.Second})
	resp, ok = h.f.fleetChanges(3)
	if !ok || len(resp.Racks) != 2 {
		t.Fatalf("after a deletion in r1 and a lease on r2: %+v", resp)
	}
	r1, r2 := resp.Racks[0], resp.Racks[1]
	if len(r1.Hosts) != 0 || len(r1.Deleted) != 1 || r1.Deleted[0] != "h1" || r1.Lease != nil {
		t.Fatalf("r1: %+v", r1)
	}
	if len(r2.Hosts) != 0 || r2.Lease == nil || r2.Lease.Holder != "a" {
		t.Fatalf("r2 (lease only, hosts unchanged): %+v", r2)
	}
	// A watcher behind the tombstones of one rack resets that rack only.
	for i := 0; i < MaxTombstones+5; i++ {
		n := "t" + itoa(i)
		h.ok(PutHostCmd{Host: host(n, "r1")})
		h.ok(DeleteHostCmd{Name: n})
	}
	resp, _ = h.f.fleetChanges(4)
	if len(resp.Racks) != 2 || !resp.Racks[0].Reset || len(resp.Racks[0].Hosts) != 1 || resp.Racks[1].Reset {
		t.Fatalf("reset: %+v", resp.Racks)
	}
}

func TestWatchFleetWakesOnAnyRack(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	got := make(chan int, 1)
	go func() {
		resp, err := h.f.WatchFleet(context.Background(), 1, time.After(time.Minute))
		if err != nil {
			got <- -1
			return
		}
		got <- len(resp.Racks)
	}()
	// Written once the watch is parked, so the write is what wakes it.
	testenv.WaitBlocked(t, 30*time.Second, "fsm.(*FSM).WatchFleet")
	h.ok(PutHostCmd{Host: host("y1", "r9")})
	select {
	case n := <-got:
		if n != 1 {
			t.Fatalf("woke with %d racks, want r9 only", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a change in a new rack did not wake the fleet watch")
	}
	resp, err := h.f.WatchFleet(context.Background(), h.index, time.After(100*time.Millisecond))
	if err != nil || len(resp.Racks) != 0 || resp.Index != h.index {
		t.Fatalf("timeout answer: %+v %v", resp, err)
	}
}
