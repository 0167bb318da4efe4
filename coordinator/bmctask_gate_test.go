package coordinator

import (
	"errors"
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestBMCTaskNeedsEveryVoter: the leader writes a BMC task record only
// once every voter applies the command type; before, the write is refused
// with upgrade_required (a voter without it would stop at the entry).
func TestBMCTaskNeedsEveryVoter(t *testing.T) {
	s, record := olderVoterStore(t, "before the task record", func(old map[fsm.CmdType]byte) { delete(old, fsm.CmdBMCTask) })
	b, err := fsm.Encode(fsm.BMCTaskCmd{Rack: "r1", Name: "h1", Start: &wire.BMCTaskRequest{Epoch: 1, CreatedIndex: 1,
		Kind: wire.BMCTaskRAID, TaskURI: "/redfish/v1/TaskService/Tasks/1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.gate(b); !errors.Is(err, wire.ErrUpgradeRequired) {
		t.Fatalf("task record with a voter without it: %v", err)
	}
	record("n2", s.fsm.Commands(), "new")
	if err := s.gate(b); err != nil {
		t.Fatalf("task record, every voter upgraded: %v", err)
	}
}
