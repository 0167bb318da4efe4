package fsm

import (
	"fmt"
	"time"

	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
)

// bmcAcct is the clear part of a BMC account record (credRec.BMC); the
// passwords are credRec.Sealed (current) and credRec.Pending.
type bmcAcct struct {
	Host         string    `json:"host"`
	State        string    `json:"state"`
	Epoch        uint64    `json:"epoch,omitempty"`
	PendingEpoch uint64    `json:"pendingEpoch,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	RotatedAt    time.Time `json:"rotatedAt,omitzero"`
}

// applyBMCAccount records a pending password, confirms it, or records
// that the fence at the BMC is off, for a host of the writer's rack under
// the rack's current epoch (a stale holder's write is refused, so it can
// never replace the password the current holder set).
func (f *FSM) applyBMCAccount(t *tx, c BMCAccountCmd) (any, error) {
	h := f.s.Hosts[c.Name].rec()
	if h == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	if h.Rack != c.Rack {
		return nil, newErr(wire.CodeForbidden, "host %s is in rack %s, not %s: an agent writes BMC accounts only of hosts of its own rack", c.Name, h.Rack, c.Rack)
	}
	if err := f.checkEpoch(c.Rack, c.Epoch); err != nil {
		return nil, err
	}
	name := BMCAccountRecord(c.Name)
	old, had := f.s.Creds[name]
	rec := old
	var acct bmcAcct
	if old.BMC != nil {
		acct = *old.BMC
	}
	acct.Host = c.Name
	var ev *wire.Event
	switch c.Op {
	case wire.BMCAccountOpPending:
		if c.Sealed == nil {
			return nil, newErr(wire.CodeBadRequest, "a pending write carries the sealed password")
		}
		if had && old.Username != "" && old.Username != c.Username && old.Sealed != nil {
			return nil, conflict("host %s's BMC account is %s, not %s: a rotation keeps the account's name", c.Name, old.Username, c.Username)
		}
		s := *c.Sealed
		rec.Pending, rec.Username = &s, c.Username
		acct.State, acct.PendingEpoch, acct.Reason = wire.BMCAccountPending, c.Epoch, ""
	case wire.BMCAccountOpConfirm:
		if old.Pending == nil {
			return nil, conflict("host %s's BMC account has no pending password to confirm (confirmed already, or never recorded): record one first", c.Name)
		}
		if acct.PendingEpoch != c.Epoch {
			return nil, conflict("host %s's pending BMC password was recorded under epoch %d, not %d: rotate again under this epoch", c.Name, acct.PendingEpoch, c.Epoch)
		}
		rec.Sealed, rec.Pending = old.Pending, nil
		acct.State, acct.Epoch, acct.PendingEpoch, acct.RotatedAt, acct.Reason = wire.BMCAccountConfirmed, c.Epoch, 0, c.Time, ""
		ev = &wire.Event{Type: wire.EventNormal, Reason: wire.ReasonBMCAccountRotated,
			Message: fmt.Sprintf("BMC account %s rotated under epoch %d", rec.Username, c.Epoch)}
	case wire.BMCAccountOpOff:
		if old.BMC == nil || old.BMC.State != wire.BMCAccountOff || old.BMC.Reason != c.Reason {
			ev = &wire.Event{Type: wire.EventWarning, Reason: wire.ReasonBMCAccountOff,
				Message: "the fence at the BMC is off for this host: " + c.Reason}
		}
		acct.State, acct.Reason = wire.BMCAccountOff, c.Reason
	default:
		return nil, newErr(wire.CodeBadRequest, "BMC account op %q is not pending, confirm or off", c.Op)
	}
	rec.BMC, rec.Index = &acct, t.index
	f.s.Creds[name] = rec
	nh, changed := *h, false
	if ev != nil {
		ev.Source = "coordinator"
		nh.Events = appendEvents(h.Events, []wire.Event{*ev}, t.index, c.Time)
		changed = true
	}
	if dropRotationRequest(&nh, c) {
		changed = true
	}
	if changed {
		f.storeHost(t, &nh)
	}
	return rec.stored(), nil
}

// BMCAccount returns the record of host's BMC account.
func (f *FSM) BMCAccount(host string) (StoredCredentials, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	c, ok := f.s.Creds[BMCAccountRecord(host)]
	return c.stored(), ok
}

// BMCAccountInfo is the clear part of a stored BMC account record.
type BMCAccountInfo struct {
	State        string
	Epoch        uint64
	PendingEpoch uint64
	Reason       string
	RotatedAt    time.Time
	// Pending is the sealed pending password (nil: none).
	Pending *seal.Sealed
}
