package coordinator

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestGateNeedsEveryVoter: a command type (or body version) outside the
// legacy table is written only when every voter's recorded table has it;
// the refusal is upgrade_required and names the members to upgrade; a
// legacy command never waits; a downgrade recorded later closes the gate
// again.
func TestGateNeedsEveryVoter(t *testing.T) {
	const cmdNew fsm.CmdType = 250
	// This member's binary writes cmdNew at version 1; no release does.
	this := maps.Clone(fsm.NewFSM().Commands())
	this[cmdNew] = 1

	s, _, record := gateStoreWith(t, this, "n1", "n2", "n3")
	record("n1", this, "v2")
	record("n2", this, "v2")
	// n3 never recorded: a binary from before the gate.

	if err := s.gate([]byte{byte(fsm.CmdPutHost), fsm.BodyBinary}); err != nil {
		t.Fatalf("a legacy command was gated: %v", err)
	}
	err := s.gate([]byte{byte(cmdNew), 1})
	if !errors.Is(err, wire.ErrUpgradeRequired) || !strings.Contains(err.Error(), "n3 ("+fsm.LegacyVersion+")") ||
		strings.Contains(err.Error(), "n2") || !strings.Contains(err.Error(), "upgrade them") {
		t.Fatalf("new type with a legacy voter: %v", err)
	}
	if s.Supports(cmdNew, 1) {
		t.Fatal("Supports says yes with a legacy voter")
	}
	st := s.upgradeStatus()
	if st.EffectiveVersion != fsm.LegacyVersion || len(st.Lagging) != 1 || st.Lagging[0].ID != "n3" || !slices.Contains(st.Lagging[0].Missing, "250/1") {
		t.Fatalf("upgrade status: %+v", st)
	}

	record("n3", this, "v2")
	if err := s.gate([]byte{byte(cmdNew), 1}); err != nil || !s.Supports(cmdNew, 1) {
		t.Fatalf("every voter applies it: %v", err)
	}
	if err := s.gate([]byte{byte(cmdNew), 2}); err == nil {
		t.Fatal("a body version nobody applies passed")
	}
	if st := s.upgradeStatus(); st.EffectiveVersion != "v2" || len(st.Lagging) != 0 {
		t.Fatalf("upgrade status, all upgraded: %+v", st)
	}

	// n2 goes back to an older binary: the leader records its table.
	record("n2", fsm.LegacyVersions, fsm.LegacyVersion)
	if err := s.gate([]byte{byte(cmdNew), 1}); err == nil || !strings.Contains(err.Error(), "n2") {
		t.Fatalf("after a downgrade: %v", err)
	}
	// A removed member no longer counts.
	ids2 := []string{"n1", "n3"}
	s.voters.Store(&ids2)
	if err := s.gate([]byte{byte(cmdNew), 1}); err != nil {
		t.Fatalf("the downgraded member was removed: %v", err)
	}
}

// TestMemberVersionsSurviveASnapshot: the recorded versions are in the
// snapshot, and removing a member forgets its record.
func TestMemberVersionsSurviveASnapshot(t *testing.T) {
	h := newFSMT(t)
	v := fsm.MemberVersion{Binary: "v2 (abc)", Commands: fsm.WireCommands(fsm.NewFSM().Commands())}
	h.ok(fsm.SetMemberCmd{ID: "n1", HTTPAddr: "http://n1", Version: &v})
	h.ok(fsm.SetMemberCmd{ID: "n2", HTTPAddr: "http://n2", Version: &v})
	h.ok(fsm.RemoveMemberCmd{ID: "n2"})
	f := roundTrip(t, h.f)
	got, ok := f.MemberVersion("n1")
	if !ok || !sameVersion(got, v) {
		t.Fatalf("n1 after restore: %+v %v", got, ok)
	}
	if _, ok := f.MemberVersion("n2"); ok {
		t.Fatal("a removed member's version survived")
	}
}
