package coordinator

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// TestMapApplyErr: of raft's Apply errors only a lost leadership leaves
// the outcome unknown (the entry was appended and may still commit under
// the next leader); the others refuse before appending, so the write can
// be repeated on the leader.
func TestMapApplyErr(t *testing.T) {
	cases := []struct {
		in, want error
	}{
		{raft.ErrLeadershipLost, ErrOutcomeUnknown},
		{raft.ErrNotLeader, ErrNotLeader},
		{raft.ErrLeadershipTransferInProgress, ErrNotLeader},
		{raft.ErrRaftShutdown, ErrShutdown},
		{raft.ErrEnqueueTimeout, ErrBusy},
	}
	for _, c := range cases {
		if got := mapApplyErr(c.in); !errors.Is(got, c.want) {
			t.Errorf("mapApplyErr(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	// A read barrier's lost leadership is a plain "not the leader": a
	// read can be repeated.
	if got := mapRaftErr(raft.ErrLeadershipLost); got != ErrNotLeader {
		t.Errorf("mapRaftErr(ErrLeadershipLost) = %v, want ErrNotLeader", got)
	}
}

// TestCollectBoundedByBytes: a batch takes waiting commands until the
// next would carry it past maxBytes; that one starts the next batch, and
// a first command larger than the bound still goes, alone.
func TestCollectBoundedByBytes(t *testing.T) {
	in := make(chan *pending, 16)
	cmd := func(key string, n int) *pending { return &pending{key: key, data: make([]byte, n)} }
	for i := range 10 {
		in <- cmd(string(rune('a'+i)), 300<<10)
	}
	first := cmd("first", 300<<10)
	batch, carry := collect(first, in, 512, maxBatchBytes)
	if len(batch) != 3 || carry == nil || carry.key != "c" {
		t.Fatalf("batch of %d, carry %v: want 3 commands of 300 KiB under %d bytes, the fourth carried", len(batch), carry, maxBatchBytes)
	}
	big := cmd("big", 2*maxBatchBytes)
	batch, carry = collect(big, in, 512, maxBatchBytes)
	if len(batch) != 1 || carry == nil || carry.key != "d" {
		t.Fatalf("a command over the bound: batch of %d, carry %v; want it alone, the next carried", len(batch), carry)
	}
	small := make(chan *pending, 8)
	for i := range 5 {
		small <- cmd(string(rune('a'+i)), 100)
	}
	if batch, carry = collect(cmd("x", 100), small, 512, maxBatchBytes); len(batch) != 6 || carry != nil {
		t.Fatalf("small commands: batch of %d, carry %v; want all 6", len(batch), carry)
	}
	small <- cmd("y", 100)
	small <- cmd("y", 100)
	if batch, carry = collect(cmd("x", 100), small, 512, maxBatchBytes); len(batch) != 2 || carry == nil || carry.key != "y" {
		t.Fatalf("a key twice: batch of %d, carry %v; want the second y carried", len(batch), carry)
	}
}
