package coordinator

import (
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestRackStatusCreatedWaitsForEveryVoter: the leader writes a rack report
// naming hosts' createdIndex (body version 3, checked in Apply) only once
// every voter applies that version; while one does not (a rolling upgrade
// from a binary with type 22 at version 2 only) it writes the report
// without the field, as version 2, unchecked, which that voter applies.
func TestRackStatusCreatedWaitsForEveryVoter(t *testing.T) {
	s, record := olderVoterStore(t, "older", func(older map[fsm.CmdType]byte) { older[fsm.CmdRackStatus] = fsm.BodyBinary })

	st := &wire.HostStatus{ProvisioningState: wire.StateAvailable}
	c := fsm.RackStatusCmd{Rack: "r1", Epoch: 3, Hosts: []wire.RackHostReport{{Name: "h1", Created: 7, Status: st}, {Name: "h2", Touch: 5, Created: 8}}}
	encode := func(c fsm.RackStatusCmd) []byte { return writtenForm(t, s, c) }
	b := encode(s.rackStatusForm(c))
	if b[1] != fsm.BodyBinary {
		t.Fatalf("a voter lacks version 3: written at version %d, want %d", b[1], fsm.BodyBinary)
	}
	got, _ := fsm.Decode(b)
	if got.(fsm.RackStatusCmd).CreatedChecked() {
		t.Fatalf("a voter lacks version 3: the report kept createdIndex: %+v", got)
	}
	if c.Hosts[0].Created != 7 {
		t.Fatal("rackStatusForm changed the caller's report")
	}
	record("n2", s.fsm.Commands(), "new")
	b = encode(s.rackStatusForm(c))
	got, _ = fsm.Decode(b)
	if b[1] != fsm.RackStatusCreatedVersion || got.(fsm.RackStatusCmd).Hosts[0].Created != 7 {
		t.Fatalf("every voter applies version 3: written at version %d as %+v", b[1], got)
	}
	plain := fsm.RackStatusCmd{Rack: "r1", Epoch: 3, Hosts: []wire.RackHostReport{{Name: "h1", Status: st}}}
	if b := encode(s.rackStatusForm(plain)); b[1] != fsm.BodyBinary {
		t.Fatalf("a report naming no createdIndex: version %d", b[1])
	}
}
