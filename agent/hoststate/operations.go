package hoststate

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// Operation intents: reboot, power-off holds and re-inspection.
// The rows are in table.go (sections Re-inspection and Power); these are
// their conditions and effects.

func (r *run) reboot() *wire.Intent {
	if r.h.Intents == nil {
		return nil
	}
	return r.h.Intents.Reboot
}

func (r *run) inspectIntent() *wire.Intent {
	if r.h.Intents == nil {
		return nil
	}
	return r.h.Intents.Inspect
}

// holds are the power-off holds, by requester.
func (r *run) holds() map[string]*wire.Intent {
	if r.h.Intents == nil {
		return nil
	}
	return r.h.Intents.PowerOff
}

// holders lists the requesters holding the host off, sorted.
func (r *run) holders() []string {
	var out []string
	for k := range r.holds() {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// wantOn: the power the spec and the intents ask for in steady states:
// online, and no requester holds the host off.
func (r *run) wantOn() bool { return r.h.Online && len(r.holds()) == 0 }

func idx(it *wire.Intent) string { return strconv.FormatUint(it.CreatedIndex, 10) }

// rebootPending: a reboot whose power-off is not done yet.
func (r *run) rebootPending() bool {
	it := r.reboot()
	return it != nil && r.get(keyRebootOff) != idx(it)
}

// rebootOffDone: a reboot whose power-off is done (power-on next).
func (r *run) rebootOffDone() bool {
	it := r.reboot()
	return it != nil && r.get(keyRebootOff) == idx(it)
}

// offMode is how the host is to be powered off now: the reboot's mode
// while a reboot is pending, otherwise hard when any hold asks hard (or
// there is no hold: online false), soft when every hold asks soft.
func (r *run) offMode() string {
	if r.rebootPending() {
		return r.reboot().Mode
	}
	hs := r.holds()
	if len(hs) == 0 {
		return wire.RebootHard
	}
	for _, it := range hs {
		if it.Mode != wire.RebootSoft {
			return wire.RebootHard
		}
	}
	return wire.RebootSoft
}

// ReasonSoftPowerOffTimedOut is the reason of the Warning event recorded
// when a soft power-off is given up for a hard one (the agent counts them).
const ReasonSoftPowerOffTimedOut = "SoftPowerOffTimedOut"

// offCause names what asks for the power-off now: the pending reboot, or
// the holds (by the first hold's index), or online false.
func (r *run) offCause() string {
	if r.rebootPending() {
		return "reboot:" + idx(r.reboot())
	}
	var first uint64
	for _, it := range r.holds() {
		if first == 0 || it.CreatedIndex < first {
			first = it.CreatedIndex
		}
	}
	if first > 0 {
		return "hold:" + strconv.FormatUint(first, 10)
	}
	return "offline"
}

// powerOff asks for a soft power-off while the soft mode's time lasts,
// then for a hard one (with a Warning event saying so).
func (r *run) powerOff() {
	if r.offMode() != wire.RebootSoft {
		r.emit(ActionPowerOff)
		return
	}
	since, err := time.Parse(time.RFC3339Nano, r.get(keySoftOffSince))
	if err != nil || r.get(keySoftOffFor) != r.offCause() || r.in.Now.Before(since.Add(r.cfg.SoftPowerOffTimeout)) {
		r.emit(ActionSoftPowerOff)
		return
	}
	r.note("softOff", r.get(keySoftOffSince), wire.EventWarning, ReasonSoftPowerOffTimedOut,
		"the graceful shutdown did not power the host off within %s (the agent's --soft-power-off-timeout): powering it off hard", r.cfg.SoftPowerOffTimeout)
	r.emit(ActionPowerOff)
}

// softOffUnderway records when a graceful shutdown was first seen running.
func (r *run) softOffUnderway() {
	if r.get(keySoftOffSince) == "" || r.get(keySoftOffFor) != r.offCause() {
		r.set(keySoftOffSince, r.in.Now.UTC().Format(time.RFC3339Nano))
		r.set(keySoftOffFor, r.offCause())
	}
	r.hold = r.cfg.PollInterval
}

// rebootDone drops the reboot intent, saying whether the host came back.
// keyRebootOff keeps the intent's index, so a drop that did not land is
// sent again without a second reboot.
func (r *run) rebootDone() {
	it := r.reboot()
	r.ack(wire.IntentReboot, it, true)
	switch {
	case r.st.PoweredOn:
		r.note("reboot", idx(it), wire.EventNormal, "Rebooted", "reboot (%s) done: the host was powered off and on again", it.Mode)
	case len(r.holds()) > 0:
		r.note("reboot", idx(it), wire.EventNormal, "Rebooted", "reboot (%s) done: the host stays off while held by %s", it.Mode, strings.Join(r.holders(), ", "))
	default:
		r.note("reboot", idx(it), wire.EventNormal, "Rebooted", "reboot (%s) done: the host stays off (online is false)", it.Mode)
	}
}

// ackHolds acknowledges every power-off hold: the host is off.
func (r *run) ackHolds() {
	for _, k := range r.holders() {
		it := r.holds()[k]
		if !it.Acknowledged {
			r.ack(wire.IntentPowerOff, it, false)
			r.note("held."+k, idx(it), wire.EventNormal, "PoweredOffHeld", "powered off and held off by %s", k)
		}
	}
}

// startReinspect moves an available host back to inspecting for the
// inspect intent.
func (r *run) startReinspect() {
	r.set(keyReinspect, idx(r.inspectIntent()))
}

// reinspectWanted: an inspect intent not yet carried out.
func (r *run) reinspectWanted() bool {
	it := r.inspectIntent()
	return it != nil && r.get(keyReinspected) != idx(it)
}

// reinspected: the hardware was read again; provide follows (Ironic left
// the node manageable), the intent is dropped.
func (r *run) reinspected() {
	r.set(keyReinspected, r.get(keyReinspect))
	r.set(keyReinspect, "")
	r.setNode(nodeEnrolled)
	r.ack(wire.IntentInspect, r.inspectIntent(), true)
}
