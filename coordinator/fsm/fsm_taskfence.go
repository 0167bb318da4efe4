package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// The fence of a recorded BMC task: while any task is recorded on a host
// (firmware, bios, raid, erase), a detach, drain, pivot or deletion is
// refused unless forced. Each hands the host to another manager or to
// none, and a power change or a second manager in the middle can brick a
// board mid-flash, leave BIOS settings half applied, a RAID volume half
// built or a disk half erased.

// fencedOps are the requests a recorded BMC task refuses: the intents
// that hand a host over, and opDelete.
var fencedOps = []string{wire.IntentDetach, wire.IntentDrain, opDelete}

// opDelete names a host's deletion to taskFence.
const opDelete = "delete"

// TaskFences reports whether h's recorded BMC task refuses a detach,
// drain, pivot or deletion of h: any recorded task, of any kind. The API
// asks it to choose the fenced DeleteHost body; Apply decides with it.
func TaskFences(h *wire.Host) bool { return h.Task != nil }

// taskHarm says what a power change or a second manager does to a task
// of kind.
func taskHarm(kind string) string {
	switch kind {
	case wire.BMCTaskFirmware:
		return "a power change during a flash can leave the board unbootable"
	case wire.BMCTaskBIOS:
		return "a power change while the BMC applies BIOS settings can leave them half applied"
	case wire.BMCTaskRAID:
		return "a power change during a RAID job breaks it off and can leave the volumes half built"
	case wire.BMCTaskErase:
		return "a power change during a disk erase breaks it off and leaves the disk half erased (never reported clean)"
	}
	return "a power change during a BMC task breaks it off"
}

// taskFence refuses op (one of fencedOps) on a host whose BMC runs a
// recorded task, unless forced, naming the task (kind, component, BMC
// task URI, start) and what to do. A forced one goes through and the
// host's event log records it (the returned event, nil when none).
func taskFence(h *hostRec, op string, in wire.Intent) (*wire.Event, error) {
	task := h.Task
	if !TaskFences(&h.Host) || !slices.Contains(fencedOps, op) {
		return nil, nil
	}
	if !in.Force {
		what, force := op, "repeat with --force"
		risk := "a " + what + " hands the host to another manager, and " + taskHarm(task.Kind)
		switch {
		case op == wire.IntentDetach && strings.HasPrefix(in.Reason, pivotReason):
			// A pivot's detach has no force of its own: a forced detach
			// first, which the pivot then uses.
			force = "detach it with --force first and pivot again"
			risk = "a pivot hands the host to another manager, and " + taskHarm(task.Kind)
		case op == opDelete:
			risk = "a forced deletion removes the host (and its task record) once the agent deprovisioned it: the agent holds power until the task ended, but no lease holder follows the task any more, and a host deleted mid-task can be left with " + wire.BMCTaskLeftover(task.Kind)
		}
		return nil, &Error{Code: wire.CodeBMCTaskRunning, Message: fmt.Sprintf(
			"host %s runs %s; wait for it to end (the task disappears from rackfencectl host get %s), or %s: %s",
			h.Name, describeTask(task), h.Name, force, risk)}
	}
	reason := wire.ReasonBMCTaskFenceForced
	if task.Kind == wire.BMCTaskFirmware {
		reason = wire.ReasonFirmwareFenceForced
	}
	return &wire.Event{Type: wire.EventWarning, Reason: reason,
		Message: fmt.Sprintf("%s forced while %s runs", op, describeTask(task))}, nil
}
