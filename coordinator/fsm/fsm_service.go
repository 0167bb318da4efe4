package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// The service intent: a provisioned host's BIOS settings and firmware
// brought to its spec once (the agent's servicing state). Checked here,
// in Apply, against the host the intent lands on.

// serviceRefused says why host h cannot be serviced now; nil when it can.
func serviceRefused(h *hostRec) *Error {
	in := h.Intents
	switch {
	case h.DeletionRequested:
		return conflict("host %s is being deleted: servicing cannot be asked for any more", h.Name)
	case h.PivotedTo != "" || (in != nil && in.Detach != nil):
		return conflict("host %s is detached: nothing touches a detached host, so servicing is refused; attach it first (delete its detach intent)", h.Name)
	case h.Handoff != nil && !h.Handoff.Confirmed:
		return conflict("host %s awaits its handoff from tier %s: servicing is refused until the source confirms", h.Name, h.Handoff.SourceTier)
	case in != nil && in.Drain != nil:
		return conflict("host %s is drained (%s): servicing is refused; restore it first (delete its drain intent)", h.Name, in.Drain.Mode)
	case h.Task != nil:
		return &Error{Code: wire.CodeBMCTaskRunning, Message: fmt.Sprintf(
			"host %s has a BMC task running: %s; servicing is refused until it ended (the agent follows it to its end): wait, then ask again", h.Name, describeTask(h.Task))}
	}
	state := ""
	if h.Status != nil {
		state = h.Status.ProvisioningState
	}
	if !slices.Contains(wire.ServiceableStates, state) {
		why := "wait for the current operation to finish"
		switch state {
		case "":
			why = "the agent of rack " + h.Rack + " has not registered it yet"
		case wire.StateAvailable:
			why = "an available host is prepared by itself when its spec.bios or spec.firmware asks for a change (state preparing)"
		case wire.StateServicing:
			why = "it is being serviced now; wait for it to end"
		}
		return conflict("host %s is %s: only a host that is %s can be serviced (%s)", h.Name, orNone(state), strings.Join(wire.ServiceableStates, " or "), why)
	}
	if wire.PlanService(&h.Host).Empty() {
		return conflict("host %s has neither spec.bios nor spec.firmware: there is nothing to service; set them first (rackfencectl host apply -f)", h.Name)
	}
	return nil
}

func orNone(state string) string {
	if state == "" {
		return "not registered"
	}
	return state
}
