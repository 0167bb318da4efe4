package coordinator

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestDriveServerWaitsForEveryVoter: the leader writes a status whose
// config drive names its artifact server (CmdStatus v5, CmdRackStatus v6)
// only once every voter applies that version; while one does not, it
// writes the report without the server (the drive's size and times stay),
// at the version that voter applies.
func TestDriveServerWaitsForEveryVoter(t *testing.T) {
	s, record := olderVoterStore(t, "older", func(older map[fsm.CmdType]byte) {
		older[fsm.CmdRackStatus] = fsm.RackStatusDayTwoVersion
		older[fsm.CmdStatus] = fsm.StatusDayTwoVersion
	})
	st := &wire.HostStatus{ProvisioningState: wire.StateProvisioned,
		ConfigDrive: &wire.ConfigDriveStatus{Server: "http://10.0.0.5:7482", Size: 900, PublishedAt: time.Unix(1e9, 0).UTC()}}
	rack := fsm.RackStatusCmd{Rack: "r1", Epoch: 3, Hosts: []wire.RackHostReport{{Name: "h1", Status: st}}}
	per := fsm.StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: 3, Status: *st}}
	encode := func(c fsm.Command) []byte { return writtenForm(t, s, c) }
	b := encode(s.rackStatusForm(rack))
	got, _ := fsm.Decode(b)
	if cd := got.(fsm.RackStatusCmd).Hosts[0].Status.ConfigDrive; b[1] > fsm.RackStatusDayTwoVersion || cd == nil || cd.Server != "" {
		t.Fatalf("a voter lacks v6: rack report written at version %d as %+v", b[1], got)
	}
	if b := encode(s.statusForm(per)); b[1] > fsm.StatusDayTwoVersion {
		t.Fatalf("a voter lacks v5: per-host report written at version %d", b[1])
	}
	if rack.Hosts[0].Status.ConfigDrive.Server == "" || per.Report.Status.ConfigDrive.Server == "" {
		t.Fatal("the forms changed the caller's reports")
	}
	record("n2", s.fsm.Commands(), "new")
	if b := encode(s.rackStatusForm(rack)); b[1] != fsm.RackStatusDriveServerVersion {
		t.Fatalf("every voter applies v6: rack report written at version %d", b[1])
	}
	if b := encode(s.statusForm(per)); b[1] != fsm.StatusDriveServerVersion {
		t.Fatalf("every voter applies v5: per-host report written at version %d", b[1])
	}
}
