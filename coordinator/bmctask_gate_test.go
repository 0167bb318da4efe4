package coordinator

import (
	"errors"
	"maps"
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

// TestBMCTaskFromVersionForm: a firmware task record naming the version
// before the flash is CmdBMCTask body version 2; while a voter applies
// only v1 the leader writes it without that version (v1, which every
// binary applies alike), and with it once every voter applies v2.
func TestBMCTaskFromVersionForm(t *testing.T) {
	c := fsm.BMCTaskCmd{Rack: "r1", Name: "h1", Start: &wire.BMCTaskRequest{Epoch: 1, CreatedIndex: 1,
		Kind: wire.BMCTaskFirmware, TaskURI: "/redfish/v1/TaskService/Tasks/1", Component: "bmc", FromVersion: "ilo5_303"}}
	b, err := fsm.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if b[1] != fsm.BMCTaskFromVersion {
		t.Fatalf("a record with the version before the flash is body version %d, want %d", b[1], fsm.BMCTaskFromVersion)
	}
	got, err := fsm.Decode(b)
	if err != nil || got.(fsm.BMCTaskCmd).Start.FromVersion != "ilo5_303" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	s, _, record := gateStore(t, "n1", "n2")
	record("n1", s.fsm.Commands(), "new")
	old := maps.Clone(s.fsm.Commands())
	old[fsm.CmdBMCTask] = 1
	record("n2", old, "before the version in the record")
	w := s.commandForm(c).(fsm.BMCTaskCmd)
	if w.Start.FromVersion != "" || c.Start.FromVersion != "ilo5_303" {
		t.Fatalf("written with a v1 voter: %+v (the request %+v must stay as it was)", w.Start, c.Start)
	}
	b, _ = fsm.Encode(w)
	if err := s.gate(b); err != nil {
		t.Fatalf("the v1 form with a v1 voter: %v", err)
	}
	record("n2", s.fsm.Commands(), "new")
	if w := s.commandForm(c).(fsm.BMCTaskCmd); w.Start.FromVersion != "ilo5_303" {
		t.Fatalf("every voter upgraded, written without the version: %+v", w.Start)
	}
}
