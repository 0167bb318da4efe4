package fsm

import (
	"errors"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// applyRackStatus applies a rack report: the epoch is checked once for the
// whole rack (a stale one refuses every host); then each host is written
// or touched on its own (applyHost), and a host refused (not in this
// rack, gone, a touch whose base moved, another host of the same name) is
// answered by name without failing the others.
func (f *FSM) applyRackStatus(t *tx, c RackStatusCmd) (any, error) {
	if err := f.checkEpoch(c.Rack, c.Epoch); err != nil {
		return nil, err
	}
	out := wire.RackStatusResult{Index: t.index, Hosts: make([]wire.RackHostResult, len(c.Hosts))}
	for i := range c.Hosts {
		h := &c.Hosts[i]
		v, err := f.applyHost(t, c.Rack, c.Epoch, c.Time, h)
		out.Hosts[i] = HostResult(h.Name, v, err)
	}
	return out, nil
}

// HostResult is one host's outcome in a rack report's answer, from what
// applying its report answered (applyHost, or a StatusCmd of the split).
func HostResult(name string, v any, err error) wire.RackHostResult {
	res := wire.RackHostResult{Name: name}
	switch r := v.(type) {
	case DeleteHostResult:
		res.Removed = true
	case wire.Host:
		res.ModifiedIndex = r.ModifiedIndex
	}
	if err != nil {
		return wire.RackHostResult{Name: name, Error: ErrorDetail(err)}
	}
	return res
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
// under its name. A report naming none (an older agent, a per-host
// write, or a body from before the check: decodeRackStatus) is not
// checked; a host that does not exist is refused by ownHost.
func sameHost(old *hostEntry, h *wire.RackHostReport) error {
	if h.Created == 0 || old == nil || old.CreatedIndex == h.Created {
		return nil
	}
	return notFound("created %d is not host %s's createdIndex %d: the host was deleted and created again since; nothing of this report is written to the new host",
		h.Created, h.Name, old.CreatedIndex)
}

// applyTouch refreshes the epoch and lastUpdated of old's unchanged
// status. It is refused unless the host is unchanged since the agent's
// last full write (touchBase). A touch does not move the host's
// modifiedIndex nor the rack's index: watchers are not woken for it, and
// the next touch keeps the same base.
func (f *FSM) applyTouch(t *tx, old *hostEntry, epoch uint64, at time.Time, h *wire.RackHostReport) (any, error) {
	if err := touchBase(old, h); err != nil {
		return nil, err
	}
	st := *old.Status
	st.LastUpdated, st.Epoch = at, epoch
	rec := *old
	rec.Status = &st
	f.fleet.swap(old, &rec)
	f.s.Hosts[rec.Name] = &rec
	f.s.rack(rec.Rack).Hosts[rec.Name] = &rec
	return rec.host(), nil
}

// touchBase refuses a touch of old (a host of the agent's rack) unless it
// is unchanged since the touch's base.
func touchBase(old *hostEntry, h *wire.RackHostReport) error {
	if old.Status == nil || old.ModifiedIndex != h.Touch {
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
