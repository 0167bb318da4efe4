package hoststate

import (
	"fmt"
	"strconv"

	"github.com/rackfence/rackfence/shared/wire"
)

// Shorthands for the table.
const (
	sNew         = wire.StateNone
	sUnmanaged   = wire.StateUnmanaged
	sRegistering = wire.StateRegistering
	sInspecting  = wire.StateInspecting
	sAvailable   = wire.StateAvailable
	sProvisionin = wire.StateProvisioning
	sProvisioned = wire.StateProvisioned
	sExternal    = wire.StateExternallyProvisioned
	sServicing   = wire.StateServicing
	sPreparing   = wire.StatePreparing
	sDeprovision = wire.StateDeprovisioning
	sPowerOffDel = wire.StatePoweringOffBeforeDelete
	sDeleting    = wire.StateDeleting
)

// table is the state machine: every transition is one row. Outcome rows
// come first (the first match handles Input.Last), then decision rows in
// priority order: handoff, removal past no return, resume, unmanaged,
// deletion, removal, detach, maintenance, BMC details, lifecycle, power.
var table = []row{
	// ---- Outcomes of the last action ----------------------------------
	{name: "SoftPowerOffUnderway", on: ActionSoftPowerOff, res: resProgress,
		why: "The OS is shutting down; asked again after the poll interval, until the agent's --soft-power-off-timeout after the first such answer (then a hard power-off).",
		do:  (*run).softOffUnderway},
	{name: "ActionInProgress", on: anyAction, res: resProgress,
		why: "An action started but not finished is asked about again after the poll interval.",
		do:  func(r *run) { r.hold = r.cfg.PollInterval }},
	{name: "TransientFailure", on: anyAction, res: resTransient,
		// From seed 001.
		why: "A transient failure (timeout, BMC unreachable or 5xx, fenced) is retried soon and not counted, up to the agent's --max-transient-failures in a row (then it counts as a failed action); fenced never counts.",
		do: func(r *run) {
			r.hold = r.cfg.TransientRetry
			// Recorded once per failing action until one succeeds, so an
			// unreachable BMC does not flood the bounded event log.
			if r.in.Last.Err == ErrClassTransient {
				bound := "never counted"
				if m := r.cfg.MaxTransientFailures; m > 0 {
					bound = fmt.Sprintf("counted as an error after %d in a row", m)
				}
				r.note("transient", string(r.in.Last.Action), wire.EventWarning, "TransientFailure",
					"%s: %s (retrying every %s, %s; recorded once until an action succeeds)", r.in.Last.Action, r.lastMessage(), r.hold, bound)
			}
		}},
	{name: "NodeLostDuringDeletion", on: anyAction, res: resNotFound, from: states(sPowerOffDel, sDeleting), to: sDeleting,
		why: "The provisioner lost the node during deletion: nothing left to delete.", do: (*run).nodeLost},
	{name: "NodeLostDuringDeprovisionForDelete", on: anyAction, res: resNotFound, from: states(sDeprovision), to: sDeleting,
		when: func(r *run) bool { return r.h.DeletionRequested },
		why:  "The provisioner lost the node while deprovisioning for deletion: nothing left to delete.", do: (*run).nodeLost},
	{name: "NodeLostInSteadyState", on: anyAction, res: resNotFound, from: states(sAvailable, sProvisioned, sExternal, sServicing, sPreparing),
		// From seed 004.
		why: "The provisioner lost the node (e.g. Ironic lost its database): re-register and, if provisioned, re-adopt, with no power change.",
		do:  (*run).nodeLost},
	{name: "NodeLostMidOperation", on: anyAction, res: resNotFound, from: states(sRegistering, sInspecting, sProvisionin, sDeprovision), to: sRegistering,
		why: "The provisioner lost the node mid-operation: start again from registration (hardware details are kept, so no re-inspection).",
		do:  (*run).nodeLost},
	{name: "NodeLost", on: anyAction, res: resNotFound,
		why: "The provisioner lost the node: forget it.", do: (*run).nodeLost},
	{name: "PowerOffBeforeDeleteAbandoned", on: ActionPowerOff, res: resFailed, from: states(sPowerOffDel), to: sDeleting,
		when: func(r *run) bool { return r.deleteTries()+1 >= r.cfg.MaxDeleteTries },
		// From BMO.
		why: "A power-off before delete that keeps failing is given up after a few tries (3 by default); the deletion continues (check the host's power by hand).",
		do:  (*run).abandonForDelete},
	{name: "PowerOffBeforeDeleteFailed", on: ActionPowerOff, res: resFailed, from: states(sPowerOffDel),
		why: "A failed power-off before delete is counted and retried with backoff.", do: (*run).failForDelete},
	{name: "DeprovisionBeforeDeleteAbandoned", on: ActionDeprovision, res: resFailed, from: states(sDeprovision), to: sDeleting,
		when: func(r *run) bool { return r.h.DeletionRequested && r.deleteTries()+1 >= r.cfg.MaxDeleteTries },
		// From BMO.
		why: "A deprovision before delete that keeps failing is given up after a few tries (3 by default); the deletion continues (the disks may still hold the image: wipe them by hand).",
		do:  (*run).abandonForDelete},
	{name: "DeprovisionBeforeDeleteFailed", on: ActionDeprovision, res: resFailed, from: states(sDeprovision),
		when: func(r *run) bool { return r.h.DeletionRequested },
		why:  "A failed deprovision before delete is counted and retried with backoff.", do: (*run).failForDelete},
	{name: "BIOSNotTaken", on: ActionVerifyBIOS, res: resFailed, from: states(sPreparing, sServicing),
		why: "BIOS settings that did not take after the reset are a preparation (servicing) error naming each one with the BMC's message; resume (or an edit of spec.bios) applies them again, clearing spec.bios abandons them.",
		do:  (*run).biosNotTaken},
	{name: "ActionFailed", on: anyAction, res: resFailed,
		// From seed 001.
		why: "A failed action (or the --max-transient-failures-th transient failure in a row, and every one after it) sets errorType, errorMessage and errorCount and waits an exponential backoff with jitter.",
		do: func(r *run) {
			r.fail(errorTypeFor(r.in.Last.Action, r.state(), r.in.Last.Err), fmt.Sprintf("%s: %s", r.in.Last.Action, r.lastMessage()))
		}},
	{name: "RegisteredExternallyProvisioned", on: ActionRegister, res: resOK, from: states(sRegistering), to: sExternal,
		when: func(r *run) bool { return r.h.ExternallyProvisioned },
		// From seed 004.
		why: "An externally provisioned host is registered, then adopted (never inspected).",
		do:  func(r *run) { r.setNode(nodeEnrolled) }},
	{name: "RegisteredWithHardwareDetails", on: ActionRegister, res: resOK, from: states(sRegistering), to: sAvailable,
		when: func(r *run) bool { return r.st.HardwareDetails != nil },
		why:  "A host that arrives with hardware details (pivoted in) is not re-inspected.",
		do:   func(r *run) { r.setNode(nodeEnrolled) }},
	{name: "Registered", on: ActionRegister, res: resOK, from: states(sRegistering), to: sInspecting,
		why: "Lifecycle: registering → inspecting.", do: func(r *run) { r.setNode(nodeEnrolled) }},
	{name: "Reregistered", on: ActionRegister, res: resOK,
		why: "A host re-registered in place (node lost, re-attach) keeps its state; provide or adopt follows.",
		do:  func(r *run) { r.setNode(nodeEnrolled) }},
	{name: "Inspected", on: ActionInspect, res: resOK, from: states(sInspecting), to: sAvailable,
		why: "Lifecycle: inspecting → available (provide follows)."},
	{name: "Reinspected", on: ActionReinspect, res: resOK, from: states(sInspecting), to: sAvailable,
		why: "the hardware was read again; the inspect intent is dropped and the node provided again (Ironic left it manageable).",
		do:  (*run).reinspected},
	{name: "Provided", on: ActionProvide, res: resOK,
		why: "The provisioner made the node available.", do: func(r *run) { r.setNode(nodeReady) }},
	{name: "ProvisioningDone", on: ActionProvision, res: resOK, from: states(sProvisionin), to: sProvisioned,
		why: "Lifecycle: provisioning → provisioned.",
		do: func(r *run) {
			r.setNode(nodeReady)
			r.impliedPower(true)
		}},
	{name: "DeprovisionedForDelete", on: ActionDeprovision, res: resOK, from: states(sDeprovision), to: sDeleting,
		when: func(r *run) bool { return r.h.DeletionRequested },
		// From BMO.
		why: "A deleted host, once deprovisioned, is deleted.", do: (*run).deprovisioned},
	{name: "DeprovisionedEraseNext", on: ActionDeprovision, res: resOK, from: states(sDeprovision),
		when: func(r *run) bool { return r.eraseWanted() },
		why:  "With automatedCleaningMode metadata (or a removal drain with wipe) the disks are erased before the host is available again.",
		do:   func(r *run) { r.deprovisioned(); r.set(keyErase, "pending") }},
	{name: "Deprovisioned", on: ActionDeprovision, res: resOK, from: states(sDeprovision), to: sAvailable,
		why: "Lifecycle: deprovisioning → available.", do: (*run).deprovisioned},
	{name: "Erased", on: ActionErase, res: resOK, from: states(sDeprovision), to: sAvailable,
		why: "Every disk is erased (the method the BMC offered is named in the event): available.",
		do:  (*run).erased},
	{name: "Adopted", on: ActionAdopt, res: resOK,
		// From seed 004.
		why: "Adoption took over the running host without redeploying it.",
		do:  func(r *run) { r.setNode(nodeReady) }},
	{name: "RemovedFromProvisioner", on: ActionDetach, res: resOK, remove: true,
		when: func(r *run) bool { return r.removalStarted() },
		// From seed 002.
		why: "The removal drain removed the node from the provisioner: past the point of no return, the record may be deleted.",
		do:  (*run).commitRemoval},
	{name: "DetachDone", on: ActionDetach, res: resOK,
		// From seed 000.
		why: "The node is removed from the provisioner without deprovisioning; the host is detached and the intent acknowledged.",
		do:  (*run).markDetached},
	{name: "Deleted", on: ActionDelete, res: resOK, from: states(sDeleting), remove: true,
		why: "Deletion complete: the record may be deleted.",
		do:  func(r *run) { r.setNode(nodeNone); r.st.ProvisioningID = "" }},
	{name: "MaintenanceOnDone", on: ActionMaintenanceOn, res: resOK,
		// From seed 002.
		why: "Maintenance on; operational status maintenance; intent acknowledged.",
		do: func(r *run) {
			r.setFlag(keyMaintenance, true)
			r.ack(wire.IntentDrain, r.drain(), false)
			r.event(wire.EventNormal, "MaintenanceOn", "host is in maintenance: no power or provisioning actions until restored")
		}},
	{name: "MaintenanceOffDone", on: ActionMaintenanceOff, res: resOK,
		// From seed 002.
		why: "Maintenance off, back to management.",
		do: func(r *run) {
			r.setFlag(keyMaintenance, false)
			r.event(wire.EventNormal, "Restored", "maintenance off: host is managed again")
		}},
	{name: "PoweredOffForDelete", on: ActionPowerOff, res: resOK, from: states(sPowerOffDel), to: sDeleting,
		// From BMO.
		why: "Powered off before delete; delete next.", do: func(r *run) { r.powered(false) }},
	{name: "PoweredOn", on: ActionPowerOn, res: resOK,
		why: "Power asserted on.", do: func(r *run) { r.powered(true) }},
	{name: "PoweredOff", on: ActionPowerOff, res: resOK,
		why: "Power asserted off.", do: func(r *run) { r.powered(false) }},
	{name: "SoftPoweredOff", on: ActionSoftPowerOff, res: resOK,
		why: "The graceful shutdown powered the host off.", do: func(r *run) { r.powered(false) }},
	{name: "FirmwareUpdated", on: ActionFirmwareUpdate, res: resOK, from: states(sServicing, sPreparing),
		why: "Every component of spec.firmware shows its version: servicing (or that part of preparing) ends.",
		do:  (*run).firmwareUpdated},
	{name: "RAIDBuilt", on: ActionBuildRAID, res: resOK, from: states(sPreparing),
		why: "spec.raid's volumes are built and read back.", do: (*run).raidBuilt},
	{name: "BIOSApplied", on: ActionApplyBIOS, res: resOK, from: states(sPreparing, sServicing),
		why: "The settings of spec.bios that differ are in the BMC's settings object; the reset they need follows (power-off, power-on), then the read-back.",
		do:  (*run).biosApply},
	{name: "BIOSVerified", on: ActionVerifyBIOS, res: resOK, from: states(sPreparing, sServicing),
		why: "Every setting of spec.bios reads back as asked.", do: (*run).biosVerified},
	{name: "ActionSucceeded", on: anyAction, res: resOK,
		why: "Any other success: its facts are recorded and the error cleared."},

	// ---- Pivot handoff --------------------------------------------------
	{name: "AwaitingHandoffDeleted", remove: true,
		when: func(r *run) bool { return r.handoffPending() && r.h.DeletionRequested },
		why:  "A pivoted host not yet handed over was never touched here: delete the record, nothing else."},
	{name: "AwaitingHandoff",
		when: func(r *run) bool { return r.handoffPending() },
		why:  "A pivoted host is not touched until the source tier confirms its detach."},
	{name: "HandoffConfirmed", to: sRegistering, next: true,
		when: func(r *run) bool {
			return r.h.Handoff != nil && r.h.Handoff.Confirmed && r.get(keyHandoff) != strconv.FormatUint(r.h.Handoff.DetachIndex, 10)
		},
		why: "Pivot: once confirmed, the host starts here from registration, keeping its hardware details (then adopt).",
		do:  (*run).takeOver},

	// ---- Removal past its point of no return ----------------------------
	{name: "RemovalIrreversible", remove: true,
		when: func(r *run) bool { return r.flag(keyRemovalCommitted) },
		// From seed 002 ISSUE-2.
		why: "Once the node is gone a removal cannot be cancelled; the record is deleted.",
		do: func(r *run) {
			if it := r.drain(); it == nil || it.Mode != wire.DrainRemoval {
				r.note("removalCancel", "refused", wire.EventWarning, "RemovalNotCancellable",
					"the removal cannot be cancelled: the provisioner's node is already gone; re-create the host to manage it again")
			}
		}},

	// ---- Resume (one-shot) ----------------------------------------------
	{name: "Resume", next: true,
		when: func(r *run) bool {
			it := r.resume()
			return it != nil && !r.resumeSeen && r.inError() && r.get(keyResumed) != strconv.FormatUint(it.CreatedIndex, 10)
		},
		// From seed 001.
		why: "Resume sets errorCount to 1 and retries now; the intent is dropped.",
		do: func(r *run) {
			it := r.resume()
			r.resumeSeen = true
			r.st.ErrorCount = 1
			r.set(keyRetryAt, "")
			r.set(keyRetryGen, "")
			r.set(keyResumed, strconv.FormatUint(it.CreatedIndex, 10))
			r.ack(wire.IntentResume, it, true)
			r.event(wire.EventNormal, "Resumed", "resume: errorCount set to 1, retrying %s now", r.st.ErrorType)
		}},
	{name: "ResumeAlreadyApplied", next: true,
		when: func(r *run) bool { return r.resume() != nil && !r.resumeSeen && r.inError() },
		why:  "A resume seen again before it is dropped changes nothing.",
		do:   func(r *run) { r.resumeSeen = true; r.ack(wire.IntentResume, r.resume(), true) }},
	{name: "ResumeWithoutError", next: true,
		when: func(r *run) bool { return r.resume() != nil && !r.resumeSeen },
		// From seed 001.
		why: "Resume on a host not in error is dropped with an event and changes nothing.",
		do: func(r *run) {
			r.resumeSeen = true
			r.ack(wire.IntentResume, r.resume(), true)
			r.event(wire.EventNormal, "ResumeIgnored", "resume: the host is not in error; nothing to do")
		}},

	// ---- Unmanaged (seed 003) ------------------------------------------
	{name: "Unmanaged", from: states(sNew, sUnmanaged), to: sUnmanaged, next: true,
		when: func(r *run) bool { return r.bmcNone() },
		// From seed 003.
		why: "No BMC address and no credentials: unmanaged, discovered, no BMC action (intents still apply: nothing to stop)."},
	{name: "StartManaging", from: states(sNew, sUnmanaged), to: sRegistering, next: true,
		when: func(r *run) bool { return !r.bmcNone() },
		// From seed 003.
		why: "BMC details given (even partial): register."},

	// ---- Deletion -------------------------------------------------------
	{name: "DeleteUnregistered", from: states(sNew, sUnmanaged, sRegistering), to: sDeleting, next: true,
		when: func(r *run) bool { return r.h.DeletionRequested },
		// From BMO.
		why: "A new, unmanaged or registering host goes straight to deleting."},
	{name: "DeleteDetached", from: states(sInspecting, sAvailable, sProvisionin, sProvisioned, sExternal, sDeprovision, sPowerOffDel), to: sDeleting, next: true,
		when: func(r *run) bool { return r.h.DeletionRequested && r.flag(keyDetached) },
		// From seed 000.
		why: "Deleting a detached host goes straight to deleting: no power-off, no deprovisioning."},
	{name: "DeleteInMaintenance", from: states(sInspecting, sAvailable, sProvisionin, sProvisioned, sExternal, sDeprovision, sPowerOffDel), to: sDeleting, next: true,
		when: func(r *run) bool { return r.h.DeletionRequested && r.flag(keyMaintenance) },
		why:  "A host in maintenance gets no power action: deleting it removes the node as it is."},
	{name: "DeleteWithoutBMC", from: states(sInspecting, sAvailable, sProvisionin, sProvisioned, sExternal, sDeprovision, sPowerOffDel), to: sDeleting, next: true,
		when: func(r *run) bool { return r.h.DeletionRequested && r.detach() == nil && !r.bmcComplete() },
		why:  "Without BMC details no power-off or deprovision can work: delete as is, with a warning.",
		do: func(r *run) {
			r.event(wire.EventWarning, "DeleteWithoutBMC", "deleting without power-off or deprovisioning: %s", r.bmcProblem())
		}},
	{name: "DeletePreparing", from: states(sPreparing), to: sAvailable, next: true,
		when: func(r *run) bool {
			return r.h.DeletionRequested && r.h.Task == nil && r.detach() == nil && r.node() == nodeReady
		},
		why: "Deleting a host being prepared abandons the preparation (unless a firmware update or RAID job runs: it is followed to its end first) and deletes it as an available host.",
		do:  (*run).preparingEnded},
	{name: "DeleteProvisioned", from: states(sProvisionin, sProvisioned), to: sDeprovision, next: true,
		when: func(r *run) bool { return r.h.DeletionRequested && r.detach() == nil },
		// From BMO.
		why: "A provisioned host is deprovisioned before it is deleted (a pending detach is finished first)."},
	{name: "DeleteUnprovisioned", from: states(sInspecting, sAvailable, sExternal), to: sPowerOffDel, next: true,
		when: func(r *run) bool { return r.h.DeletionRequested && r.detach() == nil },
		// From BMO.
		why: "Other hosts are powered off before they are deleted."},
	{name: "PowerOffBeforeDeleteWithoutNode", from: states(sPowerOffDel), to: sDeleting, next: true,
		when: func(r *run) bool { return r.node() == nodeNone },
		why:  "No node to power off through: delete."},
	{name: "PowerOffBeforeDelete", from: states(sPowerOffDel),
		// From BMO.
		why: "Power off before delete.", do: func(r *run) { r.emit(ActionPowerOff) }},
	{name: "DeprovisionBeforeDelete", from: states(sDeprovision),
		when: func(r *run) bool { return r.h.DeletionRequested },
		// From BMO.
		why: "Deprovision before delete.", do: func(r *run) { r.emit(ActionDeprovision) }},
	{name: "DeleteFromProvisioner", from: states(sDeleting),
		when: func(r *run) bool { return r.node() != nodeNone },
		why:  "Remove the node from the provisioner.", do: func(r *run) { r.emit(ActionDelete) }},
	{name: "DeletionComplete", from: states(sDeleting), remove: true,
		why: "Nothing registered any more: the record may be deleted."},

	// ---- Disk erase after a deprovision ---------------------------------
	{name: "EraseNotWanted", from: states(sDeprovision), to: sAvailable, next: true,
		when: func(r *run) bool {
			return r.get(keyErase) == "pending" && !r.eraseWanted() && r.jobTask(wire.BMCTaskErase) == nil
		},
		why: "automatedCleaningMode set to disabled before the erase ran: the disks are not erased (a Warning event says so).",
		do: func(r *run) {
			r.set(keyErase, "")
			r.event(wire.EventWarning, "EraseSkipped", "the disks were not erased: automatedCleaningMode is %q", r.h.AutomatedCleaningMode)
		}},
	{name: "EraseDisks", from: states(sDeprovision),
		when: func(r *run) bool {
			return (r.get(keyErase) == "pending" || r.jobTask(wire.BMCTaskErase) != nil) && !r.flag(keyMaintenance)
		},
		why: "Erase every disk (Drive.SecureErase, else Volume.Initialize), one after the other, each recorded on the host while it runs; a drive that cannot be erased is a deprovisioning error naming it, never reported clean. An erase recorded on the host is followed to its end first, whoever started it (never started again); no power change meanwhile.",
		do:  func(r *run) { r.emit(ActionErase) }},

	// ---- Removal drain (seed 002) ---------------------------------------
	{name: "RemovalCancelled", next: true,
		when: func(r *run) bool { return r.removalStarted() && r.drainMode() != wire.DrainRemoval },
		// From seed 002.
		why: "A removal is cancelled while the provisioner's node still exists; management resumes.",
		do: func(r *run) {
			r.set(keyRemoval, "")
			r.event(wire.EventNormal, "RemovalCancelled", "removal cancelled before the node was removed: host is managed again")
		}},
	{name: "RemovalWaitsForConsumer", next: true,
		when: func(r *run) bool { return r.drainMode() == wire.DrainRemoval && !r.removalGo() },
		// From seed 002.
		why: "A removal waits until the host has no consumer (or force).",
		do: func(r *run) {
			r.note("drainWait", r.drainCause(), wire.EventNormal, "DrainWaiting", "removal waits for consumer %q to release the host (or drain again with --force)", r.h.Consumer)
		}},
	{name: "RemovalLeavesMaintenanceToWipe",
		when: func(r *run) bool {
			return r.removalDeprovisions() && r.flag(keyMaintenance)
		},
		why: "A wipe cannot run in maintenance: maintenance off first.", do: func(r *run) { r.emit(ActionMaintenanceOff) }},
	{name: "RemovalWipe", from: states(sProvisionin, sProvisioned, sExternal), to: sDeprovision, next: true,
		when: func(r *run) bool { return r.wipeNeeded() && !r.flag(keyMaintenance) },
		// From seed 002.
		why: "A removal that asks for a wipe deprovisions first.",
		do:  func(r *run) { r.set(keyRemoval, r.drainCause()) }},
	{name: "RemovalDeprovisions", from: states(sDeprovision),
		when: func(r *run) bool { return r.removalDeprovisions() && !r.flag(keyMaintenance) },
		why:  "A removal lets a deprovision (its wipe, or one already under way) finish first.",
		do: func(r *run) {
			r.set(keyRemoval, r.drainCause())
			r.emit(ActionDeprovision)
		}},
	{name: "RemovalWithoutNode", remove: true,
		when: func(r *run) bool { return r.drainMode() == wire.DrainRemoval && r.removalGo() && r.node() == nodeNone },
		// From seed 002.
		why: "Nothing registered: the removal is complete at once.",
		do: func(r *run) {
			if r.drain().Wipe && r.flag(keyDetached) {
				r.event(wire.EventWarning, "WipeSkipped", "removal of a detached host: no wipe, another tier manages it")
			}
			r.set(keyRemoval, r.drainCause())
			r.commitRemoval()
		}},
	{name: "Removal",
		when: func(r *run) bool { return r.drainMode() == wire.DrainRemoval && r.removalGo() },
		// From seed 002.
		why: "Stop management and remove the node from the provisioner, never deprovisioning unless asked.",
		do: func(r *run) {
			r.set(keyRemoval, r.drainCause())
			r.emit(ActionDetach)
		}},

	// ---- Detach (seed 000) ----------------------------------------------
	{name: "Detached",
		when: func(r *run) bool { return r.flag(keyDetached) && r.detach() != nil },
		// From seed 000.
		why: "While detached nothing touches the BMC or the provisioner.",
		do:  func(r *run) { r.ack(wire.IntentDetach, r.detach(), false) }},
	{name: "ReattachInPlace", from: states(sNew, sUnmanaged, sAvailable, sProvisioned, sExternal), next: true,
		when: func(r *run) bool { return r.flag(keyDetached) && r.detach() == nil },
		// From seed 000.
		why: "Removing the detach intent re-registers the host and, if it was provisioned, re-adopts it.",
		do:  (*run).reattach},
	{name: "ReattachRestart", to: sRegistering, next: true,
		when: func(r *run) bool { return r.flag(keyDetached) && r.detach() == nil },
		why:  "A host force-detached mid-operation starts again from registration when re-attached.",
		do:   (*run).reattach},
	{name: "DetachWithoutNode",
		when: func(r *run) bool {
			return r.detach() != nil && r.node() == nodeNone && (r.detachHonoured() || r.state() == sRegistering)
		},
		why: "Nothing registered (yet): the host is detached at once.", do: (*run).markDetached},
	{name: "Detach",
		when: func(r *run) bool { return r.detachHonoured() },
		// From seed 000.
		why: "Detach in provisioned, externally-provisioned or available (or forced): the provisioner's detach, never deprovision.",
		do:  func(r *run) { r.emit(ActionDetach) }},
	{name: "DetachWaits", next: true,
		when: func(r *run) bool { return r.detach() != nil },
		// From seed 000.
		why: "In other states the detach waits for the current operation to finish (unless forced).",
		do: func(r *run) {
			r.note("detachWait", strconv.FormatUint(r.detach().CreatedIndex, 10), wire.EventNormal, "DetachWaiting",
				"detach waits for %s to finish (or detach again with --force)", r.state())
		}},

	// ---- Maintenance drain (seed 002) -----------------------------------
	{name: "InMaintenance",
		when: func(r *run) bool { return r.flag(keyMaintenance) && r.drainMode() == wire.DrainMaintenance },
		// From seed 002.
		why: "In maintenance nothing is asserted.",
		do:  func(r *run) { r.ack(wire.IntentDrain, r.drain(), false) }},
	{name: "RestoreWithoutNode", next: true,
		when: func(r *run) bool { return r.flag(keyMaintenance) && r.node() == nodeNone },
		why:  "Restore with nothing registered: back to management at once.",
		do: func(r *run) {
			r.setFlag(keyMaintenance, false)
			r.event(wire.EventNormal, "Restored", "maintenance ended: host is managed again")
		}},
	{name: "Restore",
		when: func(r *run) bool { return r.flag(keyMaintenance) },
		// From seed 002.
		why: "Removing the drain intent turns maintenance off.",
		do:  func(r *run) { r.emit(ActionMaintenanceOff) }},
	{name: "MaintenanceWaitsForConsumer", next: true,
		when: func(r *run) bool { return r.drainMode() == wire.DrainMaintenance && !r.consumerClear() },
		// From seed 002.
		why: "Maintenance waits until the host has no consumer (or force).",
		do: func(r *run) {
			r.note("drainWait", r.drainCause(), wire.EventNormal, "DrainWaiting", "maintenance waits for consumer %q to release the host (or drain again with --force)", r.h.Consumer)
		}},
	{name: "MaintenanceWithoutNode",
		when: func(r *run) bool {
			return r.drainMode() == wire.DrainMaintenance && r.consumerClear() && r.node() == nodeNone
		},
		why: "Nothing registered: the host is in maintenance at once.",
		do: func(r *run) {
			r.setFlag(keyMaintenance, true)
			r.ack(wire.IntentDrain, r.drain(), false)
			r.event(wire.EventNormal, "MaintenanceOn", "host is in maintenance")
		}},
	{name: "MaintenanceOn",
		when: func(r *run) bool { return r.drainMode() == wire.DrainMaintenance && r.consumerClear() },
		// From seed 002.
		why: "The provisioner's maintenance on; no power assertion while in maintenance.",
		do:  func(r *run) { r.emit(ActionMaintenanceOn) }},

	// ---- BMC details (seed 003) -----------------------------------------
	{name: "BMCDetailsIncomplete", from: states(sRegistering),
		when: func(r *run) bool { return !r.bmcComplete() },
		// From seed 003.
		why: "Partial BMC details: a registration error naming what is missing.",
		do:  func(r *run) { r.condError(wire.ErrRegistration, r.bmcProblem()) }},
	{name: "BMCDetailsRemoved", from: states(sInspecting, sPreparing, sAvailable, sProvisionin, sProvisioned, sExternal, sServicing, sDeprovision),
		when: func(r *run) bool { return !r.bmcComplete() },
		// From seed 003.
		why: "BMC details removed after registration: an error, not unmanaged.",
		do: func(r *run) {
			r.condError(r.registrationErrorType(), "BMC details removed after registration: "+r.bmcProblem())
		}},

	// ---- Lifecycle ------------------------------------------------------
	{name: "Register", from: states(sRegistering, sInspecting, sPreparing, sAvailable, sProvisionin, sProvisioned, sExternal, sServicing, sDeprovision),
		when: func(r *run) bool { return r.node() == nodeNone },
		why:  "Make the provisioner know the host (first time, after a lost node, after re-attach).",
		do:   func(r *run) { r.emit(ActionRegister) }},
	{name: "Reinspect", from: states(sAvailable), to: sInspecting, next: true,
		when: func(r *run) bool { return r.reinspectWanted() && r.node() == nodeReady },
		why:  "the inspect intent reads the hardware of an available host again.",
		do:   (*run).startReinspect},
	{name: "InspectIntentDropped", next: true,
		when: func(r *run) bool {
			return r.reinspectWanted() && r.get(keyReinspect) == "" && r.state() != sAvailable
		},
		why: "An inspect intent on a host that left available before it ran is dropped with a Warning event.",
		do: func(r *run) {
			r.ack(wire.IntentInspect, r.inspectIntent(), true)
			r.note("inspectDropped", idx(r.inspectIntent()), wire.EventWarning, "InspectDropped", "inspect dropped: the host is %s, only an available host is inspected again", r.state())
		}},
	{name: "ServiceIntentDropped", next: true,
		when: func(r *run) bool {
			return r.serviceWanted() && r.state() != sProvisioned && r.state() != sExternal && r.state() != sServicing
		},
		why: "A service intent on a host that left provisioned before it ran is dropped with a Warning event.",
		do:  (*run).serviceDropped},
	{name: "ReinspectHardware", from: states(sInspecting),
		when: func(r *run) bool { return r.get(keyReinspect) != "" },
		why:  "Read the hardware again even though details are known.",
		do:   func(r *run) { r.emit(ActionReinspect) }},
	{name: "InspectionSkipped", from: states(sInspecting), to: sAvailable, next: true,
		when: func(r *run) bool { return r.st.HardwareDetails != nil },
		why:  "Hardware details already known: no re-inspection."},
	{name: "Inspect", from: states(sInspecting),
		why: "Read hardware details.", do: func(r *run) { r.emit(ActionInspect) }},
	{name: "PreparingDone", from: states(sPreparing), to: sAvailable, next: true,
		when: func(r *run) bool { return r.preparingOver() },
		why:  "Preparing is over (RAID, BIOS and firmware as the spec says, or the desired change cleared, which abandons it; or the provisioner must take the node again first): available.",
		do:   (*run).preparingEnded},
	// From metal3 preparing.
	{name: "StartPreparing", from: states(sAvailable), to: sPreparing, next: true,
		when: func(r *run) bool { return r.node() == nodeReady && r.preparingWanted() },
		why:  "spec.raid, spec.bios or spec.firmware asks for what the host does not have yet (or a firmware task is recorded on it): prepare it before it is available or provisioned.",
		do:   (*run).preparingStarted},
	{name: "PrepareFollowsFirmwareTask", from: states(sPreparing, sServicing),
		when: func(r *run) bool { return r.firmwareTask() != nil },
		why:  "A firmware update recorded on the host is followed to its end first, whoever started it; no power change meanwhile.",
		do:   func(r *run) { r.emit(ActionFirmwareUpdate) }},
	{name: "BuildRAID", from: states(sPreparing),
		when: func(r *run) bool { return r.raidDue() },
		why:  "Build spec.raid's hardware volumes (the controllers' volumes deleted first unless keepExisting); software RAID needs --provisioner ironic. A RAID job recorded on the host is followed to its end first, whoever started it (never started again); no power change meanwhile.",
		do:   func(r *run) { r.emit(ActionBuildRAID) }},
	// Servicing flashes first: the BIOS settings' reset then starts the
	// new images too (one power cycle for both).
	{name: "UpdateFirmware", from: states(sServicing),
		when: func(r *run) bool { return r.firmwareDue() },
		why:  "Servicing: flash spec.firmware's components first (one after the other, none already at its version), so the BIOS settings' reset after them also starts the new images.",
		do:   func(r *run) { r.emit(ActionFirmwareUpdate) }},
	{name: "ApplyBIOS", from: states(sPreparing, sServicing),
		when: func(r *run) bool { return r.biosDue() && !r.biosApplied() },
		why:  "Validate spec.bios against the host's attribute registry (an unknown, read-only or out-of-range attribute is named) and PATCH the settings that differ.",
		do:   func(r *run) { r.emit(ActionApplyBIOS) }},
	{name: "BIOSResetPowerOff", from: states(sPreparing, sServicing),
		when: func(r *run) bool { return r.biosApplied() && r.get(keyBIOSReset) == "pending" && r.st.PoweredOn },
		why:  "The BIOS settings take at the next reset: power off first (held while a firmware task is recorded).",
		do:   func(r *run) { r.emit(ActionPowerOff) }},
	{name: "BIOSResetHeld", from: states(sPreparing, sServicing),
		when: func(r *run) bool {
			return r.biosApplied() && r.get(keyBIOSReset) != "" && !r.st.PoweredOn && len(r.holds()) > 0
		},
		why: "A power-off hold keeps the host off: the BIOS settings wait for its requester to withdraw it.",
		do: func(r *run) {
			r.note("biosResetHeld", BIOSFingerprint(r.h.BIOS), wire.EventNormal, "BIOSResetHeld",
				"the BIOS settings take at the next power-on, which waits for the power-off hold of %v", r.holders())
		}},
	{name: "BIOSResetPowerOn", from: states(sPreparing, sServicing),
		when: func(r *run) bool { return r.biosApplied() && r.get(keyBIOSReset) != "" && !r.st.PoweredOn },
		why:  "Power on: the BIOS applies the pending settings as the system starts.",
		do:   func(r *run) { r.set(keyBIOSReset, "off"); r.emit(ActionPowerOn) }},
	{name: "BIOSResetDone", from: states(sPreparing, sServicing), next: true,
		when: func(r *run) bool { return r.biosApplied() && r.get(keyBIOSReset) == "off" && r.st.PoweredOn },
		why:  "The reset is done: the read-back follows. In servicing it is also the reboot asked for (the update policy's), which is then not made again.",
		do:   (*run).biosResetDone},
	{name: "VerifyBIOS", from: states(sPreparing, sServicing),
		when: func(r *run) bool { return r.biosApplied() },
		why:  "Read the BIOS back: each setting that did not take is named with the BMC's message.",
		do:   func(r *run) { r.emit(ActionVerifyBIOS) }},
	{name: "PrepareFirmware", from: states(sPreparing),
		why: "Update the firmware of spec.firmware, one component after the other (a component already at its version is not flashed again).",
		do:  func(r *run) { r.emit(ActionFirmwareUpdate) }},
	{name: "ServicingDoneAvailable", from: states(sServicing), to: sAvailable, next: true,
		when: func(r *run) bool { return r.servicingOver() && r.servicingFrom() == sAvailable },
		why:  "Servicing is over (firmware at its versions, or the provisioner must take the node again first): back to available.",
		do:   (*run).servicingEnded},
	{name: "ServicingDoneProvisioned", from: states(sServicing), to: sProvisioned, next: true,
		when: func(r *run) bool { return r.servicingOver() && r.servicingFrom() == sProvisioned },
		why:  "Servicing is over: back to provisioned, where the reboot that let it run follows.",
		do:   (*run).servicingEnded},
	{name: "ServicingDoneExternal", from: states(sServicing), to: sExternal, next: true,
		when: func(r *run) bool { return r.servicingOver() && r.servicingFrom() == sExternal },
		why:  "Servicing is over: back to externally provisioned, where the reboot that let it run follows.",
		do:   (*run).servicingEnded},
	// From metal3 servicing and HostUpdatePolicy.
	{name: "StartServicing", from: states(sProvisioned, sExternal), to: sServicing, next: true,
		when: func(r *run) bool { return r.node() == nodeReady && r.servicingWanted() },
		why:  "A service intent (BIOS settings and firmware to the spec, once; the event states the power cycles it costs), or spec.firmware / spec.bios asking for what a provisioned host does not have yet with updatePolicy.firmwareUpdates / firmwareSettings onReboot when a reboot is asked, or a firmware task recorded on the host: service it first; no power change while a flash runs.",
		do:   (*run).servicingStarted},
	{name: "BecomeExternallyProvisioned", from: states(sAvailable), to: sExternal, next: true,
		when: func(r *run) bool { return r.h.ExternallyProvisioned },
		// From seed 004.
		why: "ExternallyProvisioned set on an available host: adopt it.",
		do:  func(r *run) { r.setNode(nodeEnrolled) }},
	{name: "Provide", from: states(sAvailable, sProvisionin),
		when: func(r *run) bool { return r.node() == nodeEnrolled },
		why:  "Make the registered node available (Ironic: provide).", do: func(r *run) { r.emit(ActionProvide) }},
	{name: "ProvisionRequested", from: states(sAvailable), to: sProvisionin, next: true,
		when: func(r *run) bool { return r.h.Image != nil && r.h.Image.URL != "" },
		why:  "Lifecycle: an image set on an available host provisions it."},
	{name: "ImageRemovedWhileProvisioning", from: states(sProvisionin), to: sDeprovision, next: true,
		when: func(r *run) bool { return r.h.Image == nil || r.h.Image.URL == "" },
		// From BMO.
		why: "Image removed while provisioning: deprovision."},
	{name: "Provision", from: states(sProvisionin),
		why: "Write the image and boot it.", do: func(r *run) { r.emit(ActionProvision) }},
	{name: "ImageRemoved", from: states(sProvisioned), to: sDeprovision, next: true,
		when: func(r *run) bool { return r.h.Image == nil || r.h.Image.URL == "" },
		why:  "Lifecycle: image removed while provisioned: deprovision (an image change alone waits until deprovisioned)."},
	{name: "Deprovision", from: states(sDeprovision),
		why: "Remove the image and power off.", do: func(r *run) { r.emit(ActionDeprovision) }},
	{name: "Adopt", from: states(sProvisioned, sExternal),
		when: func(r *run) bool { return r.node() == nodeEnrolled },
		// From seed 004.
		why: "Adopt the running host (manageable → adopting → active), no power change.",
		do:  func(r *run) { r.emit(ActionAdopt) }},

	// ---- Power ----------------------------------------------------------
	{name: "RebootPowerOff", from: states(sAvailable, sProvisioned, sExternal),
		when: func(r *run) bool { return r.node() == nodeReady && r.rebootPending() && r.st.PoweredOn },
		why:  "A reboot powers the host off first (mode soft: graceful shutdown, hard after the agent's --soft-power-off-timeout).",
		do:   (*run).powerOff},
	{name: "RebootPoweredOff", from: states(sAvailable, sProvisioned, sExternal), next: true,
		when: func(r *run) bool { return r.node() == nodeReady && r.rebootPending() && !r.st.PoweredOn },
		why:  "The reboot's power-off is done; the power-on follows when online and no requester holds the host off.",
		do:   func(r *run) { r.set(keyRebootOff, idx(r.reboot())) }},
	{name: "RebootDone", from: states(sAvailable, sProvisioned, sExternal), next: true, // once per intent: rebootDone notes it
		when: func(r *run) bool { return r.rebootOffDone() && (r.st.PoweredOn || !r.wantOn()) },
		why:  "Powered on again (or kept off: online false, a power-off held): the reboot intent is dropped.",
		do:   (*run).rebootDone},
	{name: "PowerOffHeld", from: states(sAvailable, sProvisioned, sExternal), next: true,
		when: func(r *run) bool { return r.node() == nodeReady && len(r.holds()) > 0 && !r.st.PoweredOn },
		// From the reboot and inspect intents; BMO reboot.metal3.io/KEY.
		why: "The host is off; every power-off hold is acknowledged.",
		do:  (*run).ackHolds},
	{name: "PowerOn", from: states(sAvailable, sProvisioned, sExternal),
		when: func(r *run) bool { return r.node() == nodeReady && r.wantOn() && !r.st.PoweredOn },
		why:  "online is asserted in steady states (and no requester holds the host off).", do: func(r *run) { r.emit(ActionPowerOn) }},
	{name: "PowerOff", from: states(sAvailable, sProvisioned, sExternal),
		when: func(r *run) bool { return r.node() == nodeReady && !r.wantOn() && r.st.PoweredOn },
		why:  "online is asserted in steady states; a power-off hold keeps the host off until its requester withdraws (soft when every hold asks soft).",
		do:   (*run).powerOff},

	// ---- Nothing left to do ---------------------------------------------
	{name: "StaleErrorCleared", from: states(sAvailable, sProvisioned, sExternal),
		when: func(r *run) bool { return r.st.ErrorType != "" },
		why:  "Steady and nothing left to retry (the operator withdrew what failed): the error is cleared.",
		do: func(r *run) {
			r.event(wire.EventNormal, "ErrorCleared", "%s cleared: nothing left to retry", r.st.ErrorType)
			r.clearError()
		}},
}
