package hoststate

import "github.com/rackfence/rackfence/shared/wire"

// Keys of wire.HostStatus.Extra owned by this package: the bookkeeping that
// must survive an agent restart. Values are plain strings.
const (
	// keyNode is how far the provisioner knows the host: "" not registered,
	// nodeEnrolled (registered, not yet in the state the provisioning state
	// implies: needs provide or adopt), nodeReady.
	keyNode = "node"
	// keyRetryAt is when a counted error's backoff ends (RFC 3339, UTC).
	keyRetryAt = "retryAt"
	// keyRetryGen is the spec/intent generation the backoff applies to; an
	// edit or a new intent lifts the backoff (a fix is worth trying now).
	keyRetryGen = "retryGen"
	// keyDetached is "true" once the host is detached (seed 000).
	keyDetached = "detached"
	// keyMaintenance is "true" while the host is drained for maintenance.
	keyMaintenance = "maintenance"
	// keyRemoval holds the createdIndex of the removal drain under way.
	keyRemoval = "removal"
	// keyRemovalCommitted is "true" once the provisioner's node is gone for
	// a removal: the point of no return. The coordinator reads this key
	// (coordinator/fsm/fsm_hosts.go refuses a restore then), so its value is
	// shared/wire's.
	keyRemovalCommitted = wire.ExtraRemovalCommitted
	// keyDeleteTries counts failed power-off/deprovision tries of a deletion.
	keyDeleteTries = "deleteTries"
	// keyResumed is the createdIndex of the last resume intent applied, so a
	// resume seen twice resets the backoff once.
	keyResumed = "resumed"
	// keyTransient counts the transient failures in a row: kept
	// in the status so the count survives an agent restart or failover.
	keyTransient = "transientFailures"
	// keyHandoff is the handoff DetachIndex already taken over.
	keyHandoff = "handoff"
	// keyFirmware is the fingerprint of the spec.firmware last brought to
	// its versions (FirmwareFingerprint); another fingerprint means
	// firmware work is pending.
	keyFirmware = "firmware"
	// keyRAID and keyBIOS are the fingerprints of the spec.raid and
	// spec.bios last brought about (RAIDFingerprint, BIOSFingerprint);
	// another one means preparation is pending.
	keyRAID = "raid"
	keyBIOS = "bios"
	// keyBIOSApplied is the fingerprint of the spec.bios PATCHed into the
	// settings object and not yet read back.
	keyBIOSApplied = "biosApplied"
	// keyBIOSReset is the reset that makes those settings take: "pending"
	// (needed), "off" (its power-off done, power-on next), "" (none).
	keyBIOSReset = "biosReset"
	// keyErase is "pending" from the deprovision that asks for an erase
	// until the disks are erased.
	keyErase = "erase"
	// keyServicingFrom is the steady state servicing returns to.
	keyServicingFrom = "servicingFrom"
	// keyService is the createdIndex of the service intent servicing runs
	// for ("" when servicing runs for something else).
	keyService = "service"
	// keyServiced is the createdIndex of the last service intent carried
	// out (or dropped), so a drop that did not land does not service twice.
	keyServiced = "serviced"
	// keyNotePrefix prefixes one-shot notes: an event recorded once per
	// cause (e.g. "note.detachWait" = the intent's createdIndex).
	keyNotePrefix = "note."
	// keyRebootOff is the createdIndex of the reboot intent whose
	// power-off is done (the power-on follows, then the intent is dropped).
	keyRebootOff = "rebootOff"
	// keySoftOffSince is when the soft power-off under way was first
	// found still running (RFC 3339, UTC): the hard power-off follows
	// SoftPowerOffTimeout after it.
	keySoftOffSince = "softOffSince"
	// keySoftOffFor is what the soft power-off of keySoftOffSince is for
	// (offCause): a start recorded for a withdrawn reboot or hold never
	// shortens a later one's time.
	keySoftOffFor = "softOffFor"
	// keyReinspect is the createdIndex of the inspect intent whose
	// re-inspection is under way.
	keyReinspect = "reinspect"
	// keyReinspected is the createdIndex of the last inspect intent
	// carried out (a drop that did not land does not inspect twice).
	keyReinspected = "reinspected"
)

// Values of keyNode.
const (
	nodeNone     = ""
	nodeEnrolled = "enrolled"
	nodeReady    = "ready"
)

// ExtraKeys lists every Extra key this package writes (one-shot notes use
// the "note." prefix).
var ExtraKeys = []string{
	keyNode, keyRetryAt, keyRetryGen, keyDetached, keyMaintenance, keyRemoval,
	keyRemovalCommitted, keyDeleteTries, keyResumed, keyHandoff, keyTransient,
}
