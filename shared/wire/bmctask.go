package wire

import "time"

// BMCTask is the record of a long BMC task running on a host (a firmware
// flash, BIOS settings, RAID, a disk erase), kept by the coordinator on
// the host (Host.Task, read-only) from when the rack's lease holder
// starts it until it ends it. It is the fence of day-two work: a new
// lease holder reads it and follows the task (by TaskURI) to its end
// instead of starting another and changes no power while any runs; while
// a firmware task runs the coordinator refuses detach, drain and pivot
// unless forced.
type BMCTask struct {
	// Kind is one of BMCTaskKinds.
	Kind string `json:"kind"`
	// TaskURI is the BMC's task monitor (Redfish /redfish/v1/TaskService/Tasks/…).
	TaskURI string `json:"taskURI"`
	// Component is what the task acts on: the firmware component
	// (FirmwareComponent.Component) of a firmware task; of a raid or
	// erase task the operation and the URI of the storage, volume or
	// drive it acts on ("Drive.SecureErase /redfish/v1/…/Drives/0",
	// "Create /redfish/v1/…/Volumes"). TaskURI is then that URI itself
	// when the BMC gave no task to follow: the holder reads the
	// resource's state instead.
	Component string `json:"component,omitempty"`
	// Epoch is the lease epoch the task was started under, Holder that
	// lease's holder.
	Epoch  uint64 `json:"epoch"`
	Holder string `json:"holder,omitempty"`
	// AdoptedEpoch is the last lease epoch whose holder took the task over
	// (recorded it again with the same kind and task URI).
	AdoptedEpoch uint64 `json:"adoptedEpoch,omitempty"`
	// StartedAt is when the coordinator recorded it (the leader's clock).
	StartedAt time.Time `json:"startedAt"`
	// CreatedIndex is the Raft index of the record.
	CreatedIndex uint64 `json:"createdIndex"`
	// FromVersion is the version a firmware task's component showed
	// before the flash: a new lease holder that adopts the task judges it
	// done by a version other than this when the spec names none.
	FromVersion string `json:"fromVersion,omitempty"`
}

// BMC task kinds.
const (
	BMCTaskFirmware = "firmware"
	BMCTaskBIOS     = "bios"
	BMCTaskRAID     = "raid"
	BMCTaskErase    = "erase"
)

// BMCTaskKinds lists the kinds in the order error messages name them.
var BMCTaskKinds = []string{BMCTaskFirmware, BMCTaskBIOS, BMCTaskRAID, BMCTaskErase}

// BMCTaskRequest is the body of POST /v1/hosts/{name}/task: the rack's
// lease holder records a task it started (or takes over one recorded
// under an earlier epoch: same kind and task URI).
type BMCTaskRequest struct {
	// Epoch is the rack lease epoch the agent holds.
	Epoch uint64 `json:"epoch"`
	// CreatedIndex is the host's createdIndex as the agent knows it: a
	// host deleted and created again under the name is refused.
	CreatedIndex uint64 `json:"createdIndex"`
	Kind         string `json:"kind"`
	TaskURI      string `json:"taskURI"`
	Component    string `json:"component,omitempty"`
	// FromVersion is the component's version before the flash (firmware
	// tasks only; kept in the record).
	FromVersion string `json:"fromVersion,omitempty"`
}

// BMCTaskEnd is the body of DELETE /v1/hosts/{name}/task: the lease
// holder ends the record once the BMC task finished.
type BMCTaskEnd struct {
	Epoch uint64 `json:"epoch"`
	// TaskURI, when given, must be the record's (the end is for this task).
	TaskURI string `json:"taskURI,omitempty"`
	// Outcome is one of BMCTaskOutcomes; Message says what happened.
	Outcome string `json:"outcome"`
	Message string `json:"message,omitempty"`
}

// BMC task outcomes: the task succeeded, failed, or the BMC no longer
// knows it (lost: the agent cannot tell how it ended).
const (
	BMCTaskSucceeded = "succeeded"
	BMCTaskFailed    = "failed"
	BMCTaskLost      = "lost"
)

// BMCTaskOutcomes lists the outcomes.
var BMCTaskOutcomes = []string{BMCTaskSucceeded, BMCTaskFailed, BMCTaskLost}

// Event reasons the coordinator writes for BMC task records.
const (
	ReasonBMCTaskStarted = "BMCTaskStarted"
	ReasonBMCTaskAdopted = "BMCTaskAdopted"
	ReasonBMCTaskEnded   = "BMCTaskEnded"
	// ReasonFirmwareFenceForced: an operator forced a detach or drain
	// while a firmware task ran.
	ReasonFirmwareFenceForced = "FirmwareFenceForced"
)
