package bmc

import (
	"errors"
	"fmt"

	"github.com/rackfence/rackfence/agent/errclass"
)

// Every error this package returns wraps exactly one agent/errclass class
// (or guard.ErrFenced, the guard's refusal, from agent/guard), so the
// agent's state machine can act with errors.Is. In BMC terms:
//   - errclass.ErrAuth: the BMC refused the credentials (401/403, IPMI RAKP
//     failure). Fix the host's credentials record; retrying will not help.
//   - errclass.ErrTransient: the BMC was unreachable, timed out, or answered
//     5xx. Retry later.
//   - errclass.ErrFailed: the BMC refused the operation (4xx other than auth
//     and not-found), or bmclib reported a failure.
//   - errclass.ErrUnsupported: the BMC or the protocol cannot do this
//     (404/501, no virtual media over IPMI, no matching media slot).

// ErrPoolClosed is returned by Pool.Get after Close; it wraps errclass.ErrTransient
// (the agent is shutting down).
var ErrPoolClosed = errors.Join(errclass.ErrTransient, errors.New("bmc pool is closed"))

// Day-two outcomes the state machine tells apart (each wraps one class).
var (
	// ErrUpdateInProgress: the BMC refused a firmware update because one
	// is already running (wraps errclass.ErrTransient: follow the running one,
	// retry after it ended; never power-cycle meanwhile).
	ErrUpdateInProgress = &classedError{errclass.ErrTransient, "a firmware update is already running on the BMC"}
	// ErrTaskRunning: a BMC task had not ended when the caller's timeout
	// passed (wraps errclass.ErrTransient: read it again later; a flash may still
	// be writing, so never power-cycle the host meanwhile).
	ErrTaskRunning = &classedError{errclass.ErrTransient, "the BMC task has not ended"}
	// ErrTaskGone: the BMC answers 404 for a task it started (dropped
	// once ended, or lost when the BMC restarted; wraps errclass.ErrFailed): judge
	// the outcome by the resource itself.
	ErrTaskGone = &classedError{errclass.ErrFailed, "the BMC no longer knows the task"}
	// ErrUpdateNotApplied: the BMC reported the update done but the
	// inventory does not show the new version (wraps errclass.ErrFailed).
	ErrUpdateNotApplied = &classedError{errclass.ErrFailed, "the flash did not take"}
	// ErrBIOSInvalid: desired BIOS settings the attribute registry
	// refuses (wraps errclass.ErrFailed: fix the profile).
	ErrBIOSInvalid = &classedError{errclass.ErrFailed, "BIOS settings refused by the attribute registry"}
)

// classedError is a named outcome inside an error class: one line of
// text, errors.Is matches both it and its class.
type classedError struct {
	class error
	msg   string
}

func (e *classedError) Error() string { return e.msg }
func (e *classedError) Unwrap() error { return e.class }

// ErrPowerNotConfirmed: the BMC accepted a power change but did not read
// back the new state within Options.PowerTimeout (rackfence-agent
// --bmc-power-timeout). It wraps errclass.ErrFailed: the host may not have changed
// state, so the change is retried with backoff and counted.
var ErrPowerNotConfirmed = fmt.Errorf("%w: the BMC did not read back the power change", errclass.ErrFailed)
