package hoststate

import (
	"github.com/rackfence/rackfence/shared/wire"
)

// Predicates the table's rows are written with.

// bmcNone: neither a BMC address nor credentials (seed 003: unmanaged).
func (r *run) bmcNone() bool {
	return r.h.BMC.Address == "" && r.h.BMC.Credentials == ""
}

// bmcProblem names what is missing or wrong in the BMC details and what to
// do, "" when they are complete.
func (r *run) bmcProblem() string {
	switch {
	case r.h.BMC.Address == "" && r.h.BMC.Credentials == "":
		return "bmc.address and bmc.credentials are empty: set both to manage this host"
	case r.h.BMC.Address == "":
		return "bmc.address is empty: set it (redfish://, redfish+http:// or ipmi://host:port)"
	case r.h.BMC.Credentials == "":
		return "bmc.credentials is empty: name a credentials record (PUT /v1/credentials/{name})"
	}
	if _, err := wire.ParseBMCAddress(r.h.BMC.Address); err != nil {
		return err.Error()
	}
	return ""
}

func (r *run) bmcComplete() bool { return r.bmcProblem() == "" }

// handoffPending: pivoted in, the source tier has not confirmed the detach.
func (r *run) handoffPending() bool {
	return r.h.Handoff != nil && !r.h.Handoff.Confirmed
}

// steady: the states where the host rests and power is asserted.
func steady(state string) bool {
	switch state {
	case wire.StateAvailable, wire.StateProvisioned, wire.StateExternallyProvisioned:
		return true
	}
	return false
}

// deletionState: the states of the deletion flow.
func deletionState(state string) bool {
	return state == wire.StatePoweringOffBeforeDelete || state == wire.StateDeleting
}

// detachHonoured: seed 000 honours detach in these states; others wait for
// the current operation to finish unless forced.
func (r *run) detachHonoured() bool {
	it := r.detach()
	return it != nil && (steady(r.state()) || it.Force)
}

// consumerClear: a drain may go ahead (no consumer, or forced).
func (r *run) consumerClear() bool {
	it := r.drain()
	return it != nil && (r.h.Consumer == "" || it.Force)
}

// removalStarted: a removal drain is under way (not yet past no return).
func (r *run) removalStarted() bool { return r.get(keyRemoval) != "" }

// blockedNow: the host must not be mutated.
func (r *run) blockedNow() bool {
	return r.handoffPending() || r.state() == wire.StateUnmanaged ||
		r.flag(keyDetached) || r.flag(keyMaintenance) || r.flag(keyRemovalCommitted)
}

// inError: the host was in error when this step began and still is. A
// resume acts only then: an error the last outcome just produced is not
// what the operator asked to resume from.
func (r *run) inError() bool {
	return r.in.Host.Status != nil && r.in.Host.Status.ErrorCount > 0 && r.st.ErrorCount > 0
}
