package coordinator

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestHealthWrittenOnceEveryVoterAppliesIt: while a voter's binary does
// not read status bodies with hardware health, the leader writes host and
// rack status reports without it (the form every voter applies alike);
// once every voter does, with it.
func TestHealthWrittenOnceEveryVoterAppliesIt(t *testing.T) {
	hh := &wire.HardwareHealth{Health: wire.HardwareWarning, Since: time.Unix(1, 0).UTC()}
	sc := fsm.StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: 1, Status: wire.HostStatus{Health: hh}}}
	rc := fsm.RackStatusCmd{Rack: "r1", Epoch: 1, Hosts: []wire.RackHostReport{{Name: "h1", Created: 4, Status: &wire.HostStatus{Health: hh}}}}

	s, record := olderVoterStore(t, "before health", func(old map[fsm.CmdType]byte) {
		old[fsm.CmdStatus] = fsm.BodyBinary
		old[fsm.CmdRackStatus] = fsm.RackStatusCreatedVersion
	})
	if got := s.statusForm(sc).(fsm.StatusCmd); got.Report.Status.Health != nil || sc.Report.Status.Health == nil {
		t.Fatalf("host status with an older voter: health %+v", got.Report.Status.Health)
	}
	if got := s.rackStatusForm(rc); got.Hosts[0].Status.Health != nil || !got.CreatedChecked() {
		t.Fatalf("rack status with an older voter: %+v", got.Hosts[0])
	}
	writtenForm(t, s, s.statusForm(sc))
	record("n2", s.fsm.Commands(), "new")
	if got := s.statusForm(sc).(fsm.StatusCmd); got.Report.Status.Health == nil {
		t.Fatal("every voter upgraded: host status written without health")
	}
	if got := s.rackStatusForm(rc); got.Hosts[0].Status.Health == nil {
		t.Fatal("every voter upgraded: rack status written without health")
	}
}
