package hoststate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/rackfence/rackfence/shared/wire"
)

// Preparing: bringing an available host's RAID volumes, BIOS settings and
// firmware to its spec, in that order, before it is available (and so
// before it is provisioned). RAID is one action (build-raid); BIOS is
// apply-bios (validated, PATCHed), the reset it needs (the ordinary
// power-off and power-on actions, so a recorded firmware task holds them
// like any other) and verify-bios (read back); firmware is servicing's
// firmware-update action. Each part done is remembered by the fingerprint
// of the spec it brought about, so an edit makes it pending again and
// clearing it ends preparing.

// fingerprint is a short hash of a spec part ("" for none).
func fingerprint(v any, empty bool) string {
	if empty {
		return ""
	}
	b, _ := json.Marshal(v) // maps marshal with sorted keys
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])[:16]
}

// RAIDFingerprint identifies a spec.raid: what the status remembers as
// built (Extra "raid"). Empty for none.
func RAIDFingerprint(r *wire.RAIDSpec) string {
	return fingerprint(r, r == nil || (len(r.HardwareRAIDVolumes) == 0 && len(r.SoftwareRAIDVolumes) == 0))
}

// BIOSFingerprint identifies a spec.bios (Extra "bios"). Empty for none.
func BIOSFingerprint(b *wire.BIOSSpec) string {
	return fingerprint(b, b == nil || (b.SimultaneousMultithreadingEnabled == nil && b.SRIOVEnabled == nil &&
		b.VirtualizationEnabled == nil && len(b.Settings) == 0))
}

func (r *run) raidPending() bool {
	fp := RAIDFingerprint(r.h.RAID)
	return fp != "" && r.get(keyRAID) != fp
}

func (r *run) biosPending() bool {
	fp := BIOSFingerprint(r.h.BIOS)
	return fp != "" && r.get(keyBIOS) != fp
}

// biosApplied: the current spec.bios is PATCHed, not yet read back
// (and this state applies it: biosDue).
func (r *run) biosApplied() bool {
	return r.biosDue() && r.get(keyBIOSApplied) == BIOSFingerprint(r.h.BIOS)
}

// preparingWanted: an available host whose node is ready has RAID, BIOS
// or firmware work pending, or a firmware or RAID task recorded (followed
// here, never left running).
func (r *run) preparingWanted() bool {
	return r.firmwareTask() != nil || r.jobTask(wire.BMCTaskRAID) != nil || r.raidPending() || r.biosPending() || r.firmwarePending()
}

// raidDue: spec.raid is pending, or a RAID job recorded on the host is
// followed to its end (even once spec.raid was cleared).
func (r *run) raidDue() bool { return r.raidPending() || r.jobTask(wire.BMCTaskRAID) != nil }

// preparingOver: nothing left to do, or the provisioner must take the
// node again first (preparing re-enters once it did).
func (r *run) preparingOver() bool {
	return r.node() != nodeReady || (r.firmwareTask() == nil && !r.raidDue() && !r.biosPending() && !r.firmwarePending())
}

func (r *run) preparingStarted() {
	if t := r.firmwareTask(); t != nil {
		r.event(wire.EventNormal, "FirmwareTaskFollowed", "firmware update of %s recorded on the host (%s, epoch %d): following it to its end, no power change meanwhile",
			t.Component, t.TaskURI, t.Epoch)
	}
}

// preparingEnded forgets a half-done BIOS apply: what is still wanted
// is applied again next time.
func (r *run) preparingEnded() {
	r.set(keyBIOSApplied, "")
	r.set(keyBIOSReset, "")
}

func (r *run) raidBuilt() {
	r.set(keyRAID, RAIDFingerprint(r.h.RAID))
	r.event(wire.EventNormal, "RAIDBuilt", "%s", r.doneMessage("the RAID volumes of spec.raid are built"))
}

func (r *run) biosApply() {
	r.set(keyBIOSApplied, BIOSFingerprint(r.h.BIOS))
	reset := ""
	if r.in.Last.ResetNeeded {
		reset = "pending"
	}
	r.set(keyBIOSReset, reset)
	r.event(wire.EventNormal, "BIOSSettingsApplied", "%s", r.doneMessage("BIOS settings already at spec.bios"))
}

func (r *run) biosVerified() {
	r.set(keyBIOS, BIOSFingerprint(r.h.BIOS))
	r.set(keyBIOSApplied, "")
	r.event(wire.EventNormal, "BIOSSettingsVerified", "%s", r.doneMessage("every setting of spec.bios took"))
}

// biosNotTaken: the read-back found settings that did not take. The
// counted error names them with the BMC's message; the next try (after
// the backoff, a resume or an edit) applies them again.
func (r *run) biosNotTaken() {
	r.set(keyBIOSApplied, "")
	r.set(keyBIOSReset, "")
	r.fail(errorTypeFor(r.in.Last.Action, r.state(), r.in.Last.Err), string(r.in.Last.Action)+": "+r.lastMessage())
}

func (r *run) doneMessage(fallback string) string {
	if m := r.in.Last.Message; m != "" {
		return m
	}
	return fallback
}

// eraseWanted: a deprovision of this host is followed by a disk erase —
// automatedCleaningMode metadata set explicitly (on the direct path an
// erase is a secure erase of every drive, hours on some disks, so empty
// does not ask for it), or a removal drain with wipe. Never for a
// deletion or a detached host.
func (r *run) eraseWanted() bool {
	if r.h.DeletionRequested || r.flag(keyDetached) {
		return false
	}
	if r.h.AutomatedCleaningMode == wire.CleaningMetadata {
		return true
	}
	it := r.drain()
	return it != nil && it.Mode == wire.DrainRemoval && it.Wipe
}

func (r *run) erased() {
	r.set(keyErase, "")
	r.event(wire.EventNormal, "DisksErased", "%s", r.doneMessage("every disk is erased"))
}
