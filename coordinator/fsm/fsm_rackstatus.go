package fsm

import (
	"errors"

	"github.com/rackfence/rackfence/shared/wire"
)

// applyRackStatus applies a rack report: the epoch is checked once for the
// whole rack (a stale one refuses every host); then each host is written
// or touched on its own, and a host refused (not in this rack, gone, a
// touch whose base moved, another host of the same name) is answered by
// name without failing the others.
func (f *FSM) applyRackStatus(t *tx, c RackStatusCmd) (any, error) {
	if err := f.checkEpoch(c.Rack, c.Epoch); err != nil {
		return nil, err
	}
	out := wire.RackStatusResult{Index: t.index, Hosts: make([]wire.RackHostResult, len(c.Hosts))}
	for i := range c.Hosts {
		h := &c.Hosts[i]
		res := &out.Hosts[i]
		res.Name = h.Name
		err := sameHost(f.s.Hosts[h.Name], h)
		switch {
		case err != nil:
		case h.IsTouch():
			res.ModifiedIndex, err = f.applyTouch(t, c, h)
		default:
			res.ModifiedIndex, res.Removed, err = f.applyFull(t, c, h)
		}
		if err != nil {
			res.ModifiedIndex = 0
			res.Error = ErrorDetail(err)
		}
	}
	return out, nil
}

// checkEpoch refuses a write under an epoch that is not rack's current
// lease epoch.
func (f *FSM) checkEpoch(rack string, epoch uint64) error {
	r := f.s.Racks[rack]
	if r == nil || r.Lease == nil {
		return newErr(wire.CodeStaleEpoch, "epoch %d is stale: rack %s has no lease now; acquire it again", epoch, rack)
	}
	if r.Lease.Epoch != epoch {
		return newErr(wire.CodeStaleEpoch, "epoch %d is stale: rack %s is held by %s under epoch %d", epoch, rack, r.Lease.Holder, r.Lease.Epoch)
	}
	return nil
}

// sameHost refuses a report about another host than old, the record of
// h's name now: h names a createdIndex (Created) and old has another one,
// so the host the report was made for was deleted and old created since
// under its name. A report naming none (an older agent, or a body from
// before the check: decodeRackStatus) is not checked; a host that does
// not exist is refused by the write itself.
func sameHost(old *hostRec, h *wire.RackHostReport) error {
	if h.Created == 0 || old == nil || old.CreatedIndex == h.Created {
		return nil
	}
	return notFound("created %d is not host %s's createdIndex %d: the host was deleted and created again since; nothing of this report is written to the new host",
		h.Created, h.Name, old.CreatedIndex)
}

// applyFull is one host's full status write, exactly as StatusCmd.
func (f *FSM) applyFull(t *tx, c RackStatusCmd, h *wire.RackHostReport) (uint64, bool, error) {
	rep := wire.StatusReport{Epoch: c.Epoch, Acks: h.Acks, Events: h.Events, Remove: h.Remove}
	if h.Status != nil {
		rep.Status = *h.Status
	}
	v, err := f.applyStatus(t, StatusCmd{Rack: c.Rack, Name: h.Name, Report: rep, Time: c.Time})
	if err != nil {
		return 0, false, err
	}
	if _, ok := v.(DeleteHostResult); ok {
		return 0, true, nil
	}
	return t.index, false, nil
}

// applyTouch refreshes the epoch and lastUpdated of an unchanged status.
// It is refused unless the host is unchanged since the agent's last full
// write (modifiedIndex equals the touch's base). A touch does not move
// the host's modifiedIndex nor the rack's index: watchers are not woken
// for it, and the next touch keeps the same base.
func (f *FSM) applyTouch(t *tx, c RackStatusCmd, h *wire.RackHostReport) (uint64, error) {
	old := f.s.Hosts[h.Name]
	if err := touchable(old, c.Rack, h); err != nil {
		return 0, err
	}
	st := *old.Status
	st.LastUpdated, st.Epoch = c.Time, c.Epoch
	rec := *old
	rec.Status = &st
	f.s.Hosts[rec.Name] = &rec
	f.s.rack(rec.Rack).Hosts[rec.Name] = &rec
	return rec.ModifiedIndex, nil
}

// touchable refuses a touch of old (nil: no such host) by the agent of
// rack unless old is in rack and unchanged since the touch's base.
func touchable(old *hostRec, rack string, h *wire.RackHostReport) error {
	switch {
	case old == nil:
		return notFound("host %s does not exist", h.Name)
	case old.Rack != rack:
		return newErr(wire.CodeForbidden, "host %s is in rack %s, not %s: an agent reports only hosts of its own rack", h.Name, old.Rack, rack)
	case old.Status == nil || old.ModifiedIndex != h.Touch:
		return conflict("host %s changed since index %d (it is at %d now): send its full status instead of a touch", h.Name, h.Touch, old.ModifiedIndex)
	}
	return nil
}

// ErrorDetail is the wire form of a refusal of one host.
func ErrorDetail(err error) *wire.ErrorDetail {
	var e *Error
	if errors.As(err, &e) {
		return &wire.ErrorDetail{Code: e.Code, Message: e.Message, Field: e.Field}
	}
	return &wire.ErrorDetail{Code: wire.CodeInternal, Message: err.Error()}
}
