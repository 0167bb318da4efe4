package hoststate

import (
	"strconv"

	"github.com/rackfence/rackfence/shared/wire"
)

// result is what an Outcome means to the table.
type result string

const (
	resOK        result = "ok"
	resProgress  result = "in-progress"
	resTransient result = "transient" // not counted: transient or fenced
	resFailed    result = "failed"    // counted: failed, auth or unknown
	resNotFound  result = "not-found" // the provisioner lost the node
)

// classify maps an Outcome to a result. Not-found is success for detach and
// delete (the node is gone, which is what they want) and a plain failure for
// register (it creates the node). An unknown class counts as failed.
func classify(o *Outcome) result {
	switch o.Err {
	case ErrNone:
		if o.InProgress {
			return resProgress
		}
		return resOK
	case ErrClassTransient, ErrClassFenced:
		return resTransient
	case ErrClassNotFound:
		switch o.Action {
		case ActionDetach, ActionDelete:
			return resOK
		case ActionRegister:
			return resFailed
		}
		return resNotFound
	default:
		return resFailed
	}
}

// errorTypeFor is the seed-001 error type of a failed action in a state.
// Maintenance on/off count as detach errors: both stop or restart
// management without touching the workload.
func errorTypeFor(a Action, state string, class ErrClass) string {
	provisioned := state == wire.StateProvisioned || state == wire.StateExternallyProvisioned
	switch {
	case a == ActionAdopt:
		return wire.ErrProvisionedRegistration
	case (class == ErrClassAuth || a == ActionRegister) && provisioned:
		return wire.ErrProvisionedRegistration
	case class == ErrClassAuth || a == ActionRegister:
		return wire.ErrRegistration
	}
	if state == wire.StatePreparing {
		return wire.ErrPreparation
	}
	if state == wire.StateServicing {
		return wire.ErrServicing
	}
	switch a {
	case ActionInspect, ActionReinspect:
		return wire.ErrInspection
	case ActionProvide, ActionProvision:
		return wire.ErrProvisioning
	case ActionDeprovision, ActionDelete, ActionErase:
		return wire.ErrDeprovisioning
	case ActionDetach, ActionMaintenanceOn, ActionMaintenanceOff:
		return wire.ErrDetach
	case ActionPowerOn, ActionPowerOff, ActionSoftPowerOff:
		return wire.ErrPowerManagement
	case ActionFirmwareUpdate:
		return wire.ErrServicing
	case ActionBuildRAID, ActionApplyBIOS, ActionVerifyBIOS:
		return wire.ErrPreparation
	}
	return wire.ErrRegistration
}

// learn copies the facts an outcome carries into the status.
func (r *run) learn(o *Outcome) {
	if o.ProvisioningID != "" {
		r.st.ProvisioningID = o.ProvisioningID
	}
	if o.PoweredOn != nil {
		r.st.PoweredOn = *o.PoweredOn
		r.st.PowerState = wire.PowerOff
		if *o.PoweredOn {
			r.st.PowerState = wire.PowerOn
		}
	}
	if o.HardwareDetails != nil {
		r.st.HardwareDetails = o.HardwareDetails
	}
	if o.BMCDetails != nil {
		r.st.BMCDetails = o.BMCDetails
	}
	switch {
	case o.ConfigDrive != nil:
		r.st.ConfigDrive = o.ConfigDrive
	case o.Action == ActionDeprovision && o.Err == ErrNone && !o.InProgress:
		r.st.ConfigDrive = nil // the drive is no longer served
	}
	if o.DayTwo != nil {
		r.learnDayTwo(o.DayTwo)
	}
}

// learnDayTwo replaces the parts of status.dayTwo the outcome read
// (never the outcome's own value: a copy, so statuses share nothing).
func (r *run) learnDayTwo(in *wire.DayTwoStatus) {
	d := wire.DayTwoStatus{}
	if r.st.DayTwo != nil {
		d = *r.st.DayTwo
	}
	if in.BIOS != nil {
		b := *in.BIOS
		d.BIOS = &b
	}
	if in.Firmware != nil {
		d.Firmware = append([]wire.FirmwareStatus(nil), in.Firmware...)
	}
	if in.HardwareRAIDVolumes != nil {
		d.HardwareRAIDVolumes = append([]wire.HardwareRAIDVolume{}, in.HardwareRAIDVolumes...)
	}
	if in.LastErase != nil {
		e := *in.LastErase
		d.LastErase = &e
	}
	r.st.DayTwo = &d
}

// transientFailures is the current run of transient failures in a row.
func (r *run) transientFailures() int {
	n, _ := strconv.Atoi(r.get(keyTransient))
	return n
}

// countTransient keeps the run of transient failures in a row and, once it
// reaches MaxTransientFailures, turns the outcome into a counted failure:
// the outcome rows then handle it like any failure of that action (its
// error type, backoff, resume, the deletion's tries). A BMC that keeps
// answering 5xx or cannot be reached is an error the operator must see,
// not a host that sits in its state with errorCount 0 forever.
func (r *run) countTransient() {
	switch {
	case r.in.Last.Err == ErrClassFenced:
		return // our lease, not the BMC: neither counted nor the end of a run
	case r.res != resTransient:
		r.set(keyTransient, "")
		return
	}
	n := r.transientFailures() + 1
	r.set(keyTransient, strconv.Itoa(n))
	if r.transientExceeded() {
		r.res = resFailed
	}
}

// transientExceeded: the last outcome is a transient failure that counts.
func (r *run) transientExceeded() bool {
	max := r.cfg.MaxTransientFailures
	return r.in.Last != nil && r.in.Last.Err == ErrClassTransient && max > 0 && r.transientFailures() >= max
}
