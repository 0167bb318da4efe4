package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func storageJob(kind, component string) *wire.BMCTask {
	return &wire.BMCTask{Kind: kind, Component: component, TaskURI: "/redfish/v1/TaskService/Tasks/JID_4", Epoch: 3}
}

// A RAID job or an erase recorded on the host holds every power action,
// as a firmware task does: a power change breaks the job off.
func TestPowerHeldWhileStorageJobRecorded(t *testing.T) {
	for _, kind := range []string{wire.BMCTaskRAID, wire.BMCTaskErase} {
		t.Run(kind, func(t *testing.T) {
			s := provisionedSim(t)
			s.h.Task = storageJob(kind, "Drive.SecureErase /redfish/v1/Systems/1/Storage/1/Drives/0")
			s.edit(func(h *wire.Host) { h.Online = false })
			if powerAction(s.d.Action) {
				t.Fatalf("%s while a %s job is recorded: %s", s.d.Action, kind, s.d)
			}
			if !hasEvent(s.d, ReasonPowerHeldForBMCTask) {
				t.Fatalf("want %s: %s", ReasonPowerHeldForBMCTask, s.d)
			}
			s.h.Task = nil
			s.step(nil)
			if s.d.Action != ActionPowerOff {
				t.Fatalf("want the power-off once the record ended: %s", s.d)
			}
		})
	}
}

// A RAID job recorded on an available host (its spec.raid cleared, or a
// new holder) is followed to its end in preparing, never left running.
func TestRecordedRAIDJobIsFollowed(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	s.expect(ActionNone, wire.StateAvailable)
	s.h.Task = storageJob(wire.BMCTaskRAID, "Create /redfish/v1/Systems/1/Storage/1")
	s.step(nil)
	s.expect(ActionBuildRAID, wire.StatePreparing)
	s.step(&Outcome{Action: ActionBuildRAID, InProgress: true})
	s.h.Task = nil // the agent ended the record
	s.step(nil)
	s.expect(ActionNone, wire.StateAvailable)
}
