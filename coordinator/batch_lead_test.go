package coordinator

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// TestBatcherPutsLeasesFirst: a lease write goes to Raft at once, in an
// entry of its own, even while Raft has no room for another batch and
// other writes queued before it (at 100,000 hosts renewals waited
// seconds behind rack reports and agents lost their leases), and it is
// never shed as busy while the queue is overdue; other writes keep their
// order and are shed as before.
func TestBatcherPutsLeasesFirst(t *testing.T) {
	b, _, entries, free := heldBatcher(t, 50*time.Millisecond)
	b.max = 2
	if b.queue(fsm.CmdLeaseRenew) != b.first || b.queue(fsm.CmdLeaseAcquire) != b.first || b.queue(fsm.CmdRackStatus) != b.in {
		t.Fatal("lease commands must queue in first, rack reports in in")
	}
	old := time.Now().Add(-time.Second) // queued longer than the apply timeout
	head := queue(b, context.Background(), "r/a", "report-a", old)
	queue(b, context.Background(), "r/b", "report-b", old)
	last := queue(b, context.Background(), "r/c", "report-c", old)
	deadline := time.Now().Add(30 * time.Second)
	for !b.overdue() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !b.shed(b.queue(fsm.CmdRackStatus)) {
		t.Fatal("an overdue queue must shed a rack report")
	}
	if b.shed(b.queue(fsm.CmdLeaseRenew)) {
		t.Fatal("an overdue queue shed a lease renewal: it goes ahead of the queue, never refused as busy")
	}
	lease := &pending{key: "l/a", data: []byte("renew-a"), done: make(chan fsm.Result, 1), ctx: context.Background(), queued: time.Now()}
	b.active.Add(1)
	b.first <- lease
	// Raft has no room for a batch (heldBatcher), yet the renewal goes.
	select {
	case <-lease.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the renewal got no result within 30 s while Raft had no room for a batch: it waited for a slot")
	}
	if got := entries(); len(got) != 1 || string(got[0]) != "renew-a" {
		t.Fatalf("entries handed to Raft = %q, want only the renewal, in an entry of its own", got)
	}
	if !b.overdue() {
		t.Fatal("the renewal hid the reports' backlog: the queue must stay overdue")
	}
	free()
	for _, p := range []*pending{head, last} {
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s got no result within 30 s", p.data)
		}
	}
	got := entries()
	if len(got) != 3 || !bytes.Contains(got[1], []byte("report-a")) || !bytes.Contains(got[1], []byte("report-b")) || string(got[2]) != "report-c" {
		t.Fatalf("entries = %q: want the renewal, then the reports in order, two per entry", got)
	}
}
