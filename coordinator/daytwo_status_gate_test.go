package coordinator

import (
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestDayTwoStatusWaitsForEveryVoter: the leader writes a status carrying
// dayTwo (per host: CmdStatus v3; rack: CmdRackStatus v4) only once every
// voter applies that version; while one does not, it writes the report
// without dayTwo (and a rack report keeps createdIndex where the voter
// applies v3), which that voter applies.
func TestDayTwoStatusWaitsForEveryVoter(t *testing.T) {
	s, record := olderVoterStore(t, "older", func(older map[fsm.CmdType]byte) {
		older[fsm.CmdRackStatus] = fsm.RackStatusCreatedVersion
		older[fsm.CmdStatus] = fsm.BodyBinary
	})

	st := &wire.HostStatus{ProvisioningState: wire.StateAvailable,
		DayTwo: &wire.DayTwoStatus{Firmware: []wire.FirmwareStatus{{Component: "BMC", Version: "2"}}}}
	rack := fsm.RackStatusCmd{Rack: "r1", Epoch: 3, Hosts: []wire.RackHostReport{{Name: "h1", Created: 7, Status: st}}}
	per := fsm.StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: 3, Status: *st}}
	encode := func(c fsm.Command) []byte { return writtenForm(t, s, c) }
	if b := encode(s.rackStatusForm(rack)); b[1] != fsm.RackStatusCreatedVersion {
		t.Fatalf("a voter lacks v4: rack report written at version %d, want %d", b[1], fsm.RackStatusCreatedVersion)
	}
	if b := encode(s.statusForm(per)); b[1] != fsm.BodyBinary {
		t.Fatalf("a voter lacks v3: per-host report written at version %d, want %d", b[1], fsm.BodyBinary)
	}
	if rack.Hosts[0].Status.DayTwo == nil || per.Report.Status.DayTwo == nil {
		t.Fatal("the forms changed the caller's reports")
	}
	record("n2", s.fsm.Commands(), "new")
	b := encode(s.rackStatusForm(rack))
	got, _ := fsm.Decode(b)
	if b[1] != fsm.RackStatusDayTwoVersion || got.(fsm.RackStatusCmd).Hosts[0].Status.DayTwo == nil {
		t.Fatalf("every voter applies v4: written at version %d as %+v", b[1], got)
	}
	if b := encode(s.statusForm(per)); b[1] != fsm.StatusDayTwoVersion {
		t.Fatalf("every voter applies v3: per-host report written at version %d", b[1])
	}
}
