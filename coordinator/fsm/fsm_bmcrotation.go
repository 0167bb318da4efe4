package fsm

import (
	"fmt"

	"github.com/rackfence/rackfence/shared/wire"
)

// applyRequestBMCRotation records an operator's request to rotate host's
// BMC account as the host's Intents.RotateCredentials (one at a time: a
// request while one waits returns the waiting one). Refused, saying why
// and what to do, where no agent would rotate: a host detached, pivoted
// away, awaiting its handoff, drained or being deleted, a host without a
// BMC account record (the rack's agent does not rotate: no
// --bmc-account-rotation, or --provisioner ironic, or it has not looked
// at the host yet), and one whose record says the fence at the BMC is off.
func (f *FSM) applyRequestBMCRotation(t *tx, c RequestBMCRotationCmd) (any, error) {
	h := f.s.Hosts[c.Name].rec()
	if h == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	if e := rotationRefused(h); e != nil {
		return nil, e
	}
	rec, ok := f.s.Creds[BMCAccountRecord(c.Name)]
	switch {
	case !ok || rec.BMC == nil:
		return nil, conflict("rotation is off for host %s: it has no BMC account record, so the agent of rack %s does not rotate it "+
			"(it runs without --bmc-account-rotation, or with --provisioner ironic, or has not looked at the host yet): "+
			"start the rack's agent with --bmc-account-rotation (direct provisioner), wait for `rackfencectl host bmc-account %s` to show the account, then retry",
			c.Name, h.Rack, c.Name)
	case rec.BMC.State == wire.BMCAccountOff:
		return nil, conflict("rotation is off for host %s: the fence at the BMC is off for it (%s): fix that; the rack's next lease holder tries again",
			c.Name, rec.BMC.Reason)
	}
	if h.Intents != nil && h.Intents.RotateCredentials != nil {
		return *h.Intents.RotateCredentials, nil
	}
	it := wire.Intent{Actor: in(c.Actor), Reason: c.Reason, CreatedIndex: t.index}
	nh := *h
	nh.Intents = cloneOpIntents(h.Intents)
	nh.Intents.RotateCredentials = &it
	msg := fmt.Sprintf("rotation of BMC account %s requested by %s", rec.Username, it.Actor)
	if c.Reason != "" {
		msg += ": " + c.Reason
	}
	nh.Events = appendEvents(h.Events, []wire.Event{{Type: wire.EventNormal, Reason: wire.ReasonBMCAccountRotationRequested,
		Message: msg, Source: "coordinator"}}, t.index, c.Time)
	f.storeHost(t, &nh)
	return it, nil
}

// rotationRefused says why no agent would rotate h's BMC account now.
func rotationRefused(h *hostRec) *Error {
	in := h.Intents
	switch {
	case h.DeletionRequested:
		return conflict("host %s is being deleted: its BMC account is not rotated any more", h.Name)
	case h.PivotedTo != "" || (in != nil && in.Detach != nil):
		return conflict("host %s is detached: it keeps its BMC account, but no agent rotates or uses it until it is attached again (delete its detach intent), so rotation is refused", h.Name)
	case h.Handoff != nil && !h.Handoff.Confirmed:
		return conflict("host %s awaits its handoff from tier %s: the destination tier rotates its own account once the source confirms; retry then", h.Name, h.Handoff.SourceTier)
	case in != nil && in.Drain != nil:
		return conflict("host %s is drained (%s): no agent rotates or uses its BMC account until it is restored (delete its drain intent), so rotation is refused", h.Name, in.Drain.Mode)
	}
	return nil
}

// dropRotationRequest drops h's on-demand rotation request when c, a
// confirm or off write of the holder, answers it. h is a copy the caller
// stores; its Intents are copied before the change.
func dropRotationRequest(h *hostRec, c BMCAccountCmd) bool {
	if c.Request == 0 || (c.Op != wire.BMCAccountOpConfirm && c.Op != wire.BMCAccountOpOff) ||
		h.Intents == nil || h.Intents.RotateCredentials == nil || h.Intents.RotateCredentials.CreatedIndex != c.Request {
		return false
	}
	h.Intents = cloneOpIntents(h.Intents)
	h.Intents.RotateCredentials = nil
	h.Intents = normIntents(h.Intents)
	return true
}
