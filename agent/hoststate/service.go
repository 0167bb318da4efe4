package hoststate

import "github.com/rackfence/rackfence/shared/wire"

// Servicing asked for: the service intent (a provisioned host's BIOS
// settings and firmware brought to its spec once) and the update policy's
// firmwareSettings (BIOS settings of a provisioned host at its next
// reboot). In servicing the firmware is flashed first, then the BIOS
// settings are applied by one power cycle, which also starts the new
// images: one reset for both.

// serviceIntent is the host's service intent, if any.
func (r *run) serviceIntent() *wire.Intent {
	if r.h.Intents == nil {
		return nil
	}
	return r.h.Intents.Service
}

// serviceWanted: a service intent not yet carried out.
func (r *run) serviceWanted() bool {
	it := r.serviceIntent()
	return it != nil && r.get(keyServiced) != idx(it)
}

// serviceActive: servicing runs for the service intent the host still
// has (a withdrawn one, or a deletion, ends it once no flash runs).
func (r *run) serviceActive() bool {
	it := r.serviceIntent()
	return it != nil && r.get(keyService) == idx(it) && !r.h.DeletionRequested
}

// policyBIOSWanted: updatePolicy.firmwareSettings onReboot lets a reboot
// apply spec.bios to a provisioned host.
func (r *run) policyBIOSWanted() bool {
	p := r.h.UpdatePolicy
	return p != nil && p.FirmwareSettings == wire.UpdatePolicyOnReboot && r.biosPending() && r.rebootPending()
}

// servicingBIOS: spec.bios is servicing's to apply now — for the service
// intent, or under the update policy (servicing not entered for an
// intent).
func (r *run) servicingBIOS() bool {
	if r.get(keyService) != "" {
		return r.serviceActive()
	}
	p := r.h.UpdatePolicy
	return p != nil && p.FirmwareSettings == wire.UpdatePolicyOnReboot && !r.h.DeletionRequested
}

// servicingFirmware: spec.firmware is servicing's to flash now — for the
// service intent, or when servicing was entered otherwise (the update
// policy; a withdrawn intent ends it).
func (r *run) servicingFirmware() bool {
	return r.get(keyService) == "" || r.serviceActive()
}

// biosDue: spec.bios is pending and this state applies it (preparing
// always; servicing when servicingBIOS).
func (r *run) biosDue() bool {
	return r.biosPending() && (r.state() != sServicing || r.servicingBIOS())
}

// serviceStarted marks servicing as the service intent's, acknowledges
// it and says what it costs. What the status remembers as done is
// forgotten, so the BMC is read again: a component already at its version
// is not flashed, a setting already at its value is not sent and costs no
// power cycle.
func (r *run) serviceStarted() {
	it := r.serviceIntent()
	r.set(keyService, idx(it))
	r.set(keyFirmware, "")
	r.set(keyBIOS, "")
	r.ack(wire.IntentService, it, false)
	plan := wire.PlanService(r.h)
	by := ""
	if it.Actor != "" {
		by = " by " + it.Actor
	}
	r.event(wire.EventNormal, ReasonServicingStarted, "servicing asked%s: %s", by, plan.Message)
}

// serviceEnded: servicing for the intent is over. The intent is dropped
// when it was carried out (it is still there), and remembered so a drop
// that did not land does not service twice.
func (r *run) serviceEnded() {
	if r.get(keyService) == "" || r.node() != nodeReady {
		return // not the intent's, or the provisioner must take the node again first: re-entered then
	}
	it, svc := r.serviceIntent(), r.get(keyService)
	r.set(keyService, "")
	if it == nil || idx(it) != svc {
		return // withdrawn (or replaced by a newer one, serviced next)
	}
	r.set(keyServiced, idx(it))
	r.ack(wire.IntentService, it, true)
	r.event(wire.EventNormal, ReasonServiced, "servicing done: BIOS settings and firmware as the spec says; back to %s", r.servicingFrom())
}

// serviceDropped drops a service intent of a host that left the states it
// is taken in before it ran.
func (r *run) serviceDropped() {
	it := r.serviceIntent()
	r.set(keyServiced, idx(it))
	r.ack(wire.IntentService, it, true)
	r.note("serviceDropped", idx(it), wire.EventWarning, "ServiceDropped", "service dropped: the host is %s, only a provisioned host is serviced", r.state())
}

// biosResetDone: the BIOS settings' reset is done. In servicing it is
// also the reboot the operator asked for (the update policy applies at
// the reboot): that reboot's power-off counts as done, so the host is not
// cycled a second time.
func (r *run) biosResetDone() {
	r.set(keyBIOSReset, "")
	if r.state() == sServicing && r.rebootPending() {
		r.set(keyRebootOff, idx(r.reboot()))
		r.note("rebootByBIOS", idx(r.reboot()), wire.EventNormal, "RebootedForBIOS", "the BIOS settings' power cycle was the reboot asked for: it is not made again")
	}
}

// Event reasons of the service intent.
const (
	ReasonServicingStarted = "ServicingStarted"
	ReasonServiced         = "Serviced"
)
