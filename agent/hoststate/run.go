package hoststate

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// run is the working state of one Step: the status being built, the
// decision being built, and helpers the table's rows call. Nothing in it
// outlives the Step.
type run struct {
	in   Input
	cfg  Config
	h    *wire.Host
	st   wire.HostStatus
	d    Decision
	res  result        // class of in.Last, when set
	hold time.Duration // >0: suppress actions this step (in progress, transient)
	// resumeSeen: a resume row handled the resume intent this step.
	resumeSeen bool
	// left is the state the last state change of this step left (for a
	// row's effect: apply changes the state before it runs do).
	left string
}

func newRun(in Input) *run {
	r := &run{in: in, cfg: in.Config.withDefaults(), h: &in.Host}
	if in.Host.Status != nil {
		r.st = *in.Host.Status
	} else {
		r.st.PowerState = wire.PowerUnknown // not reached yet
	}
	// Copy everything shared with the input, so Step never mutates it.
	extra := make(map[string]string, len(r.st.Extra))
	for k, v := range r.st.Extra {
		extra[k] = v
	}
	r.st.Extra = extra
	if h := r.st.OperationHistory; h != nil {
		c := *h
		r.st.OperationHistory = &c
	}
	// Nothing is registered for a new or unmanaged host, whatever a stale
	// record says.
	if r.st.ProvisioningState == wire.StateNone || r.st.ProvisioningState == wire.StateUnmanaged {
		delete(r.st.Extra, keyNode)
	}
	if in.Last != nil {
		r.res = classify(in.Last)
	}
	return r
}

// state is the current provisioning state.
func (r *run) state() string { return r.st.ProvisioningState }

func (r *run) get(k string) string { return r.st.Extra[k] }

func (r *run) set(k, v string) {
	if v == "" {
		delete(r.st.Extra, k)
		return
	}
	r.st.Extra[k] = v
}

func (r *run) flag(k string) bool { return r.st.Extra[k] == "true" }

func (r *run) setFlag(k string, on bool) {
	if on {
		r.set(k, "true")
	} else {
		r.set(k, "")
	}
}

func (r *run) node() string { return r.get(keyNode) }

func (r *run) setNode(v string) { r.set(keyNode, v) }

// event records one event stamped with the caller's clock.
func (r *run) event(typ, reason, format string, a ...any) {
	r.d.Events = append(r.d.Events, wire.Event{
		Time: r.in.Now, Type: typ, Reason: reason, Message: fmt.Sprintf(format, a...),
	})
}

// note records an event once per cause: it remembers cause under key and
// stays silent while the same cause persists, so re-running Step on the same
// host records nothing new.
func (r *run) note(key, cause, typ, reason, format string, a ...any) {
	if r.get(keyNotePrefix+key) == cause {
		return
	}
	r.set(keyNotePrefix+key, cause)
	r.event(typ, reason, format, a...)
}

// ack acknowledges an intent unless the coordinator already recorded it.
func (r *run) ack(kind string, it *wire.Intent, drop bool) {
	if it == nil || (it.Acknowledged && !drop) {
		return
	}
	for _, a := range r.d.Acks {
		if a.Kind == kind && a.CreatedIndex == it.CreatedIndex {
			return
		}
	}
	r.d.Acks = append(r.d.Acks, wire.IntentAck{Kind: kind, CreatedIndex: it.CreatedIndex, Drop: drop})
}

// gen identifies the operator's wishes: the spec and the intents. A counted
// error's backoff applies only while gen is unchanged.
func (r *run) gen() string {
	var det, dr uint64
	mode := ""
	if it := r.detach(); it != nil {
		det = it.CreatedIndex
	}
	if it := r.drain(); it != nil {
		dr, mode = it.CreatedIndex, it.Mode
	}
	return fmt.Sprintf("%d/%d/%d%s/%t", r.h.SpecIndex, det, dr, mode, r.h.DeletionRequested)
}

// emit asks for action a, unless it would change the power while a
// firmware task is recorded (powerHeld), this step holds actions back (an
// action in progress or a transient failure) or a counted error's backoff
// is running.
func (r *run) emit(a Action) {
	if r.powerHeld(a) {
		return
	}
	if r.hold > 0 {
		r.d.RequeueAfter = r.hold
		return
	}
	if at, err := time.Parse(time.RFC3339Nano, r.get(keyRetryAt)); err == nil &&
		r.in.Now.Before(at) && r.get(keyRetryGen) == r.gen() {
		r.d.RequeueAfter = at.Sub(r.in.Now)
		return
	}
	r.d.Action = a
}

// fail records a counted error and starts its backoff.
func (r *run) fail(errType, msg string) {
	r.st.ErrorType = errType
	r.st.ErrorMessage = msg
	r.st.ErrorCount++
	wait := Backoff(r.cfg, r.st.ErrorCount, r.in.Jitter)
	r.set(keyRetryAt, r.in.Now.Add(wait).UTC().Format(time.RFC3339Nano))
	r.set(keyRetryGen, r.gen())
	r.d.RequeueAfter = wait
	r.event(wire.EventWarning, reasonFor(errType), "%s (error %d, retry in %s)", msg, r.st.ErrorCount, wait.Round(time.Second))
}

// condError records an error that no action can fix (bad spec): counted
// once, then left alone until the spec changes.
func (r *run) condError(errType, msg string) {
	if r.st.ErrorType == errType && r.st.ErrorMessage == msg {
		return
	}
	r.fail(errType, msg)
	r.d.RequeueAfter = 0
}

// clearError forgets the error and its backoff: an action succeeded.
func (r *run) clearError() {
	r.st.ErrorType, r.st.ErrorMessage, r.st.ErrorCount = "", "", 0
	r.set(keyRetryAt, "")
	r.set(keyRetryGen, "")
}

func (r *run) deleteTries() int {
	n, _ := strconv.Atoi(r.get(keyDeleteTries))
	return n
}

// Intents, nil-safe.
func (r *run) detach() *wire.Intent {
	if r.h.Intents == nil {
		return nil
	}
	return r.h.Intents.Detach
}

func (r *run) drain() *wire.Intent {
	if r.h.Intents == nil {
		return nil
	}
	return r.h.Intents.Drain
}

func (r *run) resume() *wire.Intent {
	if r.h.Intents == nil {
		return nil
	}
	return r.h.Intents.Resume
}

// drainMode is the drain intent's mode, "" when there is none.
func (r *run) drainMode() string {
	if it := r.drain(); it != nil {
		return it.Mode
	}
	return ""
}

// reasonFor turns an error type into an event reason: "power management
// error" → "PowerManagementError".
func reasonFor(errType string) string {
	out := make([]byte, 0, len(errType))
	up := true
	for i := 0; i < len(errType); i++ {
		c := errType[i]
		if c == ' ' || c == '-' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}
