package hoststate

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// Servicing: bringing a host's firmware to spec.firmware, fenced by the
// BMC task record (host.task) for the whole flash.

// FirmwareFingerprint identifies a firmware spec: what the status
// remembers as done (Extra "firmware"). Empty for no firmware.
func FirmwareFingerprint(fw []wire.FirmwareComponent) string {
	if len(fw) == 0 {
		return ""
	}
	h := sha256.New()
	for _, c := range fw {
		h.Write([]byte(c.Component + "\x00" + c.URL + "\x00" + c.Version + "\x00" + c.Checksum + "\x01"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// firmwareTask is the firmware task recorded on the host, if any.
func (r *run) firmwareTask() *wire.BMCTask {
	if t := r.h.Task; t != nil && t.Kind == wire.BMCTaskFirmware {
		return t
	}
	return nil
}

// firmwarePending: spec.firmware is not yet known to be at its versions.
func (r *run) firmwarePending() bool {
	return len(r.h.Firmware) > 0 && r.get(keyFirmware) != FirmwareFingerprint(r.h.Firmware)
}

// servicingWanted: a steady host should enter servicing now. A recorded
// firmware task always wins (follow it to its end, never start another);
// otherwise a provisioned one is updated only when the operator allowed
// it (updatePolicy.firmwareUpdates onReboot) and asked for a reboot. An
// available host's firmware is brought to spec while preparing.
func (r *run) servicingWanted() bool {
	if r.firmwareTask() != nil || r.serviceWanted() || r.policyBIOSWanted() {
		return true
	}
	if !r.firmwarePending() {
		return false
	}
	p := r.h.UpdatePolicy
	return p != nil && p.FirmwareUpdates == wire.UpdatePolicyOnReboot && r.rebootPending()
}

// servicingOver: nothing left to flash, apply or follow, or the
// provisioner must take the node again first (servicing re-enters once
// it did).
func (r *run) servicingOver() bool {
	return r.node() != nodeReady || (r.firmwareTask() == nil && !r.firmwareDue() && !r.biosDue())
}

// firmwareDue: spec.firmware is pending and servicing flashes it.
func (r *run) firmwareDue() bool { return r.firmwarePending() && r.servicingFirmware() }

// servicingFrom is the state servicing returns to. Without a record (a
// status from elsewhere) it is guessed from the spec, never available for
// a host with an image (that would provision it again).
func (r *run) servicingFrom() string {
	switch v := r.get(keyServicingFrom); v {
	case sAvailable, sProvisioned, sExternal:
		return v
	}
	switch {
	case r.h.ExternallyProvisioned:
		return sExternal
	case r.h.Image != nil && r.h.Image.URL != "":
		return sProvisioned
	}
	return sAvailable
}

func (r *run) servicingStarted() {
	r.set(keyServicingFrom, r.left)
	if r.firmwareTask() == nil && r.serviceWanted() {
		r.serviceStarted()
	}
	if t := r.firmwareTask(); t != nil {
		r.event(wire.EventNormal, "FirmwareTaskFollowed", "firmware update of %s recorded on the host (%s, epoch %d): following it to its end, no power change meanwhile",
			t.Component, t.TaskURI, t.Epoch)
	}
}

// servicingEnded forgets a half-done BIOS apply (what is still wanted is
// applied again next time) and ends the service intent it ran for.
func (r *run) servicingEnded() {
	r.serviceEnded()
	r.set(keyServicingFrom, "")
	r.set(keyBIOSApplied, "")
	r.set(keyBIOSReset, "")
}

func (r *run) firmwareUpdated() {
	r.set(keyFirmware, FirmwareFingerprint(r.h.Firmware))
	msg := r.in.Last.Message
	if msg == "" {
		msg = "every component is at its version"
	}
	r.event(wire.EventNormal, "FirmwareUpdated", "%s", msg)
}

// powerActions change the host's power (directly or as part of the
// operation). None runs while a BMC task is recorded.
func powerAction(a Action) bool {
	switch a {
	case ActionPowerOn, ActionPowerOff, ActionSoftPowerOff, ActionProvision, ActionDeprovision:
		return true
	}
	return false
}

// powerHeld: action a would change the power while a BMC task recorded
// on the host runs (a power change mid-flash can leave the board
// unbootable; mid-erase or mid-build it breaks off the job and can leave
// the disk half written). It records why once per task and holds the
// action.
func (r *run) powerHeld(a Action) bool {
	t := r.h.Task
	if t == nil || !powerAction(a) {
		return false
	}
	if t.Kind == wire.BMCTaskFirmware {
		r.note("powerHeld", t.TaskURI, wire.EventWarning, ReasonPowerHeldForFirmware,
			"%s held: a firmware update of %s runs on the BMC (%s); no power change until it ended (a power change mid-flash can leave the board unbootable)",
			a, t.Component, strings.TrimSpace(t.TaskURI))
	} else {
		r.note("powerHeld", t.TaskURI, wire.EventWarning, ReasonPowerHeldForBMCTask,
			"%s held: a %s job runs on the BMC (%s, %s); no power change until it ended (a power change breaks it off and can leave the disks half written)",
			a, t.Kind, t.Component, strings.TrimSpace(t.TaskURI))
	}
	r.d.RequeueAfter = r.cfg.PollInterval
	return true
}

// ReasonPowerHeldForFirmware is the event of a power action held while a
// firmware task is recorded on the host; ReasonPowerHeldForBMCTask while
// a RAID or erase job is.
const (
	ReasonPowerHeldForFirmware = "PowerHeldForFirmware"
	ReasonPowerHeldForBMCTask  = "PowerHeldForBMCTask"
)

// jobTask is the recorded task of kind (raid, erase), if any.
func (r *run) jobTask(kind string) *wire.BMCTask {
	if t := r.h.Task; t != nil && t.Kind == kind {
		return t
	}
	return nil
}
