package coordinator

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// TestBatcherPutsLeasesFirst: a lease write queued behind other writes
// goes into the next batch ahead of them (at 100,000 hosts renewals
// waited seconds behind rack reports and agents lost their leases), and
// it is never shed as busy while the queue is overdue; other writes keep
// their order and are shed as before.
func TestBatcherPutsLeasesFirst(t *testing.T) {
	b, _, entries, free := heldBatcher(t, 50*time.Millisecond)
	b.max = 2 // a batch of two: the lease must be in the first one
	if b.queue(fsm.CmdLeaseRenew) != b.first || b.queue(fsm.CmdLeaseAcquire) != b.first || b.queue(fsm.CmdRackStatus) != b.in {
		t.Fatal("lease commands must queue in first, rack reports in in")
	}
	old := time.Now().Add(-time.Second) // queued longer than the apply timeout
	head := queue(b, context.Background(), "r/a", "report-a", old)
	queue(b, context.Background(), "r/b", "report-b", old)
	queue(b, context.Background(), "r/c", "report-c", old)
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
	free()
	for _, p := range []*pending{head, lease} {
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s got no result within 30 s", p.data)
		}
	}
	deadline = time.Now().Add(30 * time.Second)
	for len(entries()) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	got := entries()
	if len(got) < 2 {
		t.Fatalf("%d entries handed to Raft, want 2", len(got))
	}
	if !bytes.Contains(got[0], []byte("report-a")) || !bytes.Contains(got[0], []byte("renew-a")) {
		t.Fatalf("first entry %q: want the report the batcher held and the renewal queued after the others", got[0])
	}
	if !bytes.Contains(got[1], []byte("report-b")) || !bytes.Contains(got[1], []byte("report-c")) {
		t.Fatalf("second entry %q: want the other two reports, in order", got[1])
	}
}
