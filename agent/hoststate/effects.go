package hoststate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// Effects shared by several rows of the table.

func (r *run) lastMessage() string {
	msg := r.in.Last.Message
	if msg == "" {
		msg = "failed (" + string(r.in.Last.Err) + ")"
	}
	if r.transientExceeded() {
		msg += fmt.Sprintf(" (%d transient failures in a row: counted as an error from the %d%s on)",
			r.transientFailures(), r.cfg.MaxTransientFailures, ordinal(r.cfg.MaxTransientFailures))
	}
	return msg
}

func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return "th"
	case n%10 == 1:
		return "st"
	case n%10 == 2:
		return "nd"
	case n%10 == 3:
		return "rd"
	}
	return "th"
}

// nodeLost forgets the provisioner's node; the Register row follows.
func (r *run) nodeLost() {
	r.setNode(nodeNone)
	r.st.ProvisioningID = ""
	r.event(wire.EventWarning, "NodeLost", "%s: the provisioner no longer knows the host (%s); registering it again without any power change",
		r.in.Last.Action, r.lastMessage())
}

// failForDelete counts one failed try of a deletion step.
func (r *run) failForDelete() {
	r.set(keyDeleteTries, strconv.Itoa(r.deleteTries()+1))
	r.fail(errorTypeFor(r.in.Last.Action, r.state(), r.in.Last.Err), string(r.in.Last.Action)+": "+r.lastMessage())
}

// abandonForDelete gives up a deletion step that keeps failing.
func (r *run) abandonForDelete() {
	n := r.deleteTries() + 1
	r.set(keyDeleteTries, strconv.Itoa(n))
	r.clearError()
	r.event(wire.EventWarning, "DeleteStepAbandoned", "%s failed %d times (%s); continuing the deletion without it",
		r.in.Last.Action, n, r.lastMessage())
}

func (r *run) deprovisioned() {
	r.setNode(nodeReady)
	r.powered(false)
}

// powered records the power state an action implies, unless the outcome
// reported it.
func (r *run) powered(on bool) {
	r.impliedPower(on)
	// Any power change ends a soft power-off under way.
	r.set(keySoftOffSince, "")
	r.set(keySoftOffFor, "")
}

// impliedPower: when the outcome did not report the power (a BMC giving
// no power state), PoweredOn is what the action asked for, so the machine
// does not ask again, and PowerState says it was not read.
func (r *run) impliedPower(on bool) {
	if r.in.Last == nil || r.in.Last.PoweredOn == nil {
		r.st.PoweredOn = on
		r.st.PowerState = wire.PowerUnknown
	}
}

// markDetached: the node is gone, nothing may touch the host.
func (r *run) markDetached() {
	r.setFlag(keyDetached, true)
	r.setNode(nodeNone)
	r.st.ProvisioningID = ""
	r.clearError()
	r.ack(wire.IntentDetach, r.detach(), false)
	r.event(wire.EventNormal, "Detached", "host detached: removed from the provisioner without deprovisioning; no BMC or provisioner action until re-attached")
}

// reattach ends a detach: the host is registered (and adopted) again.
func (r *run) reattach() {
	r.setFlag(keyDetached, false)
	r.set(keyNotePrefix+"detachWait", "")
	r.event(wire.EventNormal, "Reattached", "detach removed: registering the host again")
}

// commitRemoval: the provisioner's node is gone; the removal can no longer
// be cancelled and the record may be deleted.
func (r *run) commitRemoval() {
	r.setFlag(keyRemovalCommitted, true)
	r.setNode(nodeNone)
	r.st.ProvisioningID = ""
	r.clearError()
	r.ack(wire.IntentDrain, r.drain(), false)
	r.event(wire.EventNormal, "RemovalCommitted", "removed from the provisioner: the removal can no longer be cancelled; the record may be deleted")
}

// takeOver starts a pivoted-in host afresh once its handoff is confirmed,
// keeping what the source tier learnt (hardware details, power).
func (r *run) takeOver() {
	for k := range r.st.Extra {
		if k == keyHandoff || strings.HasPrefix(k, keyNotePrefix) {
			continue
		}
		delete(r.st.Extra, k)
	}
	r.set(keyHandoff, strconv.FormatUint(r.h.Handoff.DetachIndex, 10))
	r.st.ProvisioningID = ""
	r.clearError()
	r.event(wire.EventNormal, "HandoffConfirmed", "handoff from %s confirmed: taking over the host", r.h.Handoff.SourceTier)
}

// drainCause identifies the drain intent for one-shot notes and keyRemoval.
func (r *run) drainCause() string {
	it := r.drain()
	if it == nil {
		return ""
	}
	return strconv.FormatUint(it.CreatedIndex, 10) + ":" + it.Mode
}

// removalGo: a removal drain may proceed (consumer gone, forced, or it has
// already started).
func (r *run) removalGo() bool {
	return r.drainMode() == wire.DrainRemoval && (r.consumerClear() || r.removalStarted())
}

// wipeNeeded: the removal asks for a wipe and the host carries an image
// that this tier may erase.
func (r *run) wipeNeeded() bool {
	if !r.removalGo() || !r.drain().Wipe || r.flag(keyDetached) {
		return false
	}
	switch r.state() {
	case wire.StateProvisioning, wire.StateProvisioned, wire.StateExternallyProvisioned:
		return true
	}
	return false
}

// removalDeprovisions: the removal must deprovision before the node goes:
// it asks for a wipe, or a deprovision is already under way. Never for a
// detached host (another tier owns it).
func (r *run) removalDeprovisions() bool {
	if !r.removalGo() || r.flag(keyDetached) {
		return false
	}
	return r.state() == wire.StateDeprovisioning || r.wipeNeeded()
}

func (r *run) registrationErrorType() string {
	if r.state() == wire.StateProvisioned || r.state() == wire.StateExternallyProvisioned {
		return wire.ErrProvisionedRegistration
	}
	return wire.ErrRegistration
}
