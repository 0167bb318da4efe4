package fsm

import (
	"maps"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// Operation intents: reboot, inspect and power-off holds. The
// checks run here, in Apply, so they see the same host the intent lands
// on; every input is in the state or the command (deterministic).

// rebootStates are the provisioning states a reboot or power-off may be
// asked in: the steady states the agent asserts power in.
var rebootStates = []string{wire.StateAvailable, wire.StateProvisioned, wire.StateExternallyProvisioned}

// operationRefused says why host h cannot take an operation intent of
// kind now; nil when it can.
func operationRefused(h *hostRec, kind string) *Error {
	what := map[string]string{wire.IntentReboot: "a reboot", wire.IntentPowerOff: "a power-off",
		wire.IntentInspect: "an inspection"}[kind]
	in := h.Intents
	switch {
	case h.DeletionRequested:
		return conflict("host %s is being deleted: %s cannot be asked for any more", h.Name, what)
	case h.PivotedTo != "" || (in != nil && in.Detach != nil):
		return conflict("host %s is detached: nothing touches a detached host, so %s is refused; attach it first (delete its detach intent)", h.Name, what)
	case h.Handoff != nil && !h.Handoff.Confirmed:
		return conflict("host %s awaits its handoff from tier %s: %s is refused until the source confirms", h.Name, h.Handoff.SourceTier, what)
	case in != nil && in.Drain != nil:
		return conflict("host %s is drained (%s): a drained host gets no power or inspection action, so %s is refused; restore it first (delete its drain intent)", h.Name, in.Drain.Mode, what)
	}
	state := ""
	if h.Status != nil {
		state = h.Status.ProvisioningState
	}
	if state == "" {
		return conflict("host %s has not been registered by the agent of rack %s yet: %s needs a registered host; wait until its provisioningState is available", h.Name, h.Rack, what)
	}
	if kind == wire.IntentInspect {
		if state != wire.StateAvailable {
			why := notNow(state)
			switch state {
			case wire.StateProvisioned:
				why = "deprovision it first (remove spec.image with rackfencectl host apply), then inspect it once it is available"
			case wire.StateExternallyProvisioned:
				why = "an externally provisioned host runs what was installed without rackfence, and is not inspected"
			}
			return conflict("host %s is %s: only an available host can be inspected again; %s", h.Name, state, why)
		}
		return nil
	}
	ok := false
	for _, s := range rebootStates {
		ok = ok || s == state
	}
	if !ok {
		return conflict("host %s is %s: %s needs it %s; %s", h.Name, state, what, strings.Join(rebootStates, ", "), notNow(state))
	}
	if kind == wire.IntentReboot && !h.Online {
		return conflict("host %s has online: false, so it stays powered off and there is nothing to reboot; set online: true to power it on", h.Name)
	}
	return nil
}

// notNow is what to do about a host whose state takes no operation
// intent now: it follows from the state, not from every state at once.
func notNow(state string) string {
	switch state {
	case wire.StateUnmanaged:
		return "it has no BMC details: give it spec.bmc (rackfencectl host apply), and it is registered"
	case wire.StateDeleting, wire.StatePoweringOffBeforeDelete:
		return "it is being deleted"
	case wire.StateInspecting:
		return "it is being inspected now: wait for that to end"
	}
	return "wait for the current operation (" + state + ") to finish: rackfencectl host get shows it"
}

// cloneOpIntents copies intents for a change, the power-off map included.
func cloneOpIntents(in *wire.Intents) *wire.Intents {
	c := cloneIntents(in)
	if c.PowerOff != nil {
		c.PowerOff = maps.Clone(c.PowerOff)
	}
	return c
}

func (f *FSM) applyPutOperationIntent(t *tx, c PutOperationIntentCmd) (any, error) {
	old := f.s.Hosts[c.Name].rec()
	if old == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	switch c.Kind {
	case wire.IntentReboot, wire.IntentInspect, wire.IntentPowerOff, wire.IntentService:
	default:
		return nil, &Error{Code: wire.CodeBadRequest, Field: "kind", Message: "unknown operation intent kind " + c.Kind}
	}
	if c.Kind == wire.IntentPowerOff && !wire.ValidRequester(c.Intent.Requester) {
		return nil, &Error{Code: wire.CodeBadRequest, Field: "requester", Message: "a power-off needs a requester name"}
	}
	if c.Kind == wire.IntentService {
		if e := serviceRefused(old); e != nil {
			return nil, e
		}
	} else if e := operationRefused(old, c.Kind); e != nil {
		return nil, e
	}
	it := c.Intent
	it.Plan = nil
	if c.Kind == wire.IntentService {
		p := wire.PlanService(&old.Host)
		it.Plan = &p
	}
	it.Requester, it.Mode, it.Actor = in(it.Requester), in(it.Mode), in(it.Actor)
	it.CreatedIndex, it.Acknowledged, it.AckEpoch = t.index, false, 0
	if c.Kind == wire.IntentPowerOff && old.Intents != nil {
		if cur := old.Intents.PowerOff[it.Requester]; cur != nil && cur.Mode == it.Mode {
			return *cur, nil // already held by this requester: nothing changes
		}
	}
	rec := *old
	rec.Intents = cloneOpIntents(old.Intents)
	switch c.Kind {
	case wire.IntentReboot:
		rec.Intents.Reboot = &it
	case wire.IntentInspect:
		rec.Intents.Inspect = &it
	case wire.IntentService:
		rec.Intents.Service = &it
	case wire.IntentPowerOff:
		if rec.Intents.PowerOff == nil {
			rec.Intents.PowerOff = map[string]*wire.Intent{}
		}
		rec.Intents.PowerOff[it.Requester] = &it
	}
	f.storeHost(t, &rec)
	return it, nil
}

func (f *FSM) applyDeleteOperationIntent(t *tx, c DeleteOperationIntentCmd) (any, error) {
	old := f.s.Hosts[c.Name].rec()
	if old == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	in := old.Intents
	if in == nil {
		return old.Host, nil
	}
	switch {
	case c.Kind == wire.IntentPowerOff && in.PowerOff[c.Requester] != nil:
	case c.Kind == wire.IntentReboot && in.Reboot != nil:
	case c.Kind == wire.IntentInspect && in.Inspect != nil:
	case c.Kind == wire.IntentService && in.Service != nil:
	default:
		return old.Host, nil // nothing to withdraw
	}
	rec := *old
	rec.Intents = cloneOpIntents(in)
	switch c.Kind {
	case wire.IntentPowerOff:
		delete(rec.Intents.PowerOff, c.Requester)
		if len(rec.Intents.PowerOff) == 0 {
			rec.Intents.PowerOff = nil
		}
	case wire.IntentReboot:
		rec.Intents.Reboot = nil
	case wire.IntentInspect:
		rec.Intents.Inspect = nil
	case wire.IntentService:
		rec.Intents.Service = nil
	}
	rec.Intents = normIntents(rec.Intents)
	f.storeHost(t, &rec)
	return rec.Host, nil
}

// ackOperation applies one ack of an operation intent to intents (already
// a private copy, its PowerOff map too); false when a is not one.
func ackOperation(in *wire.Intents, a wire.IntentAck, epoch uint64) bool {
	var slot **wire.Intent
	switch a.Kind {
	case wire.IntentReboot:
		slot = &in.Reboot
	case wire.IntentInspect:
		slot = &in.Inspect
	case wire.IntentService:
		slot = &in.Service
	case wire.IntentPowerOff:
		for k, it := range in.PowerOff {
			if it.CreatedIndex == a.CreatedIndex {
				if a.Drop {
					delete(in.PowerOff, k)
				} else {
					c := *it
					c.Acknowledged, c.AckEpoch = true, epoch
					in.PowerOff[k] = &c
				}
			}
		}
		if len(in.PowerOff) == 0 {
			in.PowerOff = nil
		}
		return true
	default:
		return false
	}
	if *slot == nil || (*slot).CreatedIndex != a.CreatedIndex {
		return true
	}
	if a.Drop {
		*slot = nil
		return true
	}
	c := **slot
	c.Acknowledged, c.AckEpoch = true, epoch
	*slot = &c
	return true
}
