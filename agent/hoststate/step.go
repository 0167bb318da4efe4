package hoststate

import (
	"fmt"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// Step decides, for one host, what happens next. It is pure (it reads
// nothing but in) and idempotent: called again with the returned status and
// Last = nil it decides the same and re-runs no finished action.
//
// It applies the first outcome row matching in.Last, then the decision rows
// in order until one that does not fall through matches.
func Step(in Input) Decision {
	r := newRun(in)
	var fired []string
	// No action is ever asked for a host awaiting handoff, so an outcome
	// then is stray: ignore it.
	if in.Last != nil && !r.handoffPending() {
		r.learn(in.Last)
		r.countTransient()
		if r.res == resOK {
			r.clearError()
			r.set(keyNotePrefix+"transient", "")
		}
		for i := range table {
			w := &table[i]
			if w.on == "" || !w.matches(r) {
				continue
			}
			r.apply(w)
			fired = append(fired, w.name)
			break
		}
	}
	// Decision rows. A row that changes the provisioning state and falls
	// through starts the scan again from the top (rows already applied are
	// skipped), so rows above it see the new state: the result is then the
	// same as a fresh Step on the new status would give.
	done := make([]bool, len(table))
scan:
	for i := range table {
		w := &table[i]
		if w.on != "" || done[i] || !w.matches(r) {
			continue
		}
		before := r.state()
		r.apply(w)
		done[i] = true
		fired = append(fired, w.name)
		if !w.next {
			break
		}
		if r.state() != before {
			goto scan
		}
	}
	r.d.Rule = strings.Join(fired, " > ")
	return r.finish()
}

// apply runs one row: state change (with an event), effect, removal.
func (r *run) apply(w *row) {
	if w.to != "" && w.to != r.state() {
		r.recordTransition(w, r.state(), w.to)
		r.left = r.state()
		from := r.state()
		if from == "" {
			from = "new"
		}
		r.st.ProvisioningState = w.to
		r.event(wire.EventNormal, w.name, "%s → %s: %s", from, w.to, w.why)
	}
	if w.do != nil {
		w.do(r)
	}
	if w.remove {
		r.d.Remove = true
	}
}

// finish derives the operational status and the blocked flag from the
// bookkeeping, so they can never disagree with it.
func (r *run) finish() Decision {
	// Nothing is registered for a new, unmanaged or detached host, whatever
	// a stray outcome said.
	if r.state() == wire.StateNone || r.state() == wire.StateUnmanaged || r.flag(keyDetached) {
		r.setNode(nodeNone)
	}
	r.st.OperationalStatus = r.operationalStatus()
	if len(r.st.Extra) == 0 {
		r.st.Extra = nil
	}
	if r.d.Remove {
		r.d.Action = ActionNone
	}
	r.d.Blocked = (r.blockedNow() || r.d.Remove) && r.d.Action == ActionNone
	if r.d.Action != ActionNone {
		r.d.RequeueAfter = 0
	}
	r.d.Status = r.st
	return r.d
}

func (r *run) operationalStatus() string {
	switch {
	case r.handoffPending():
		return wire.OpAwaitingHandoff
	case r.flag(keyDetached):
		return wire.OpDetached
	case r.flag(keyMaintenance):
		return wire.OpMaintenance
	case r.removalStarted() || r.flag(keyRemovalCommitted):
		return wire.OpRemoving
	case r.st.ErrorType != "":
		return wire.OpError
	case r.state() == wire.StateUnmanaged:
		return wire.OpDiscovered
	}
	return wire.OpOK
}

// String renders a decision for logs and test failures.
func (d Decision) String() string {
	return fmt.Sprintf("state=%s op=%s action=%q requeue=%s blocked=%t remove=%t err=%q/%d rule=%s",
		d.Status.ProvisioningState, d.Status.OperationalStatus, d.Action, d.RequeueAfter, d.Blocked, d.Remove,
		d.Status.ErrorType, d.Status.ErrorCount, d.Rule)
}
