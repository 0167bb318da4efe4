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
