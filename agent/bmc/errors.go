package bmc

import (
	"errors"
	"fmt"

	"github.com/rackfence/rackfence/agent/errclass"
)

// Error classes. Every error this package returns wraps exactly one of them
// (or guard.ErrFenced, the guard's refusal, from agent/guard), so the
// agent's state machine can act with errors.Is. They are the classes of
// agent/errclass (the same values) under this package's names; in BMC
// terms:
var (
	// ErrAuth: the BMC refused the credentials (401/403, IPMI RAKP failure).
	// Fix the host's credentials record; retrying will not help.
	ErrAuth = errclass.ErrAuth
	// ErrTransient: the BMC was unreachable, timed out, or answered 5xx.
	// Retry later.
	ErrTransient = errclass.ErrTransient
	// ErrFailed: the BMC refused the operation (4xx other than auth and
	// not-found), or bmclib reported a failure.
	ErrFailed = errclass.ErrFailed
	// ErrUnsupported: the BMC or the protocol cannot do this (404/501, no
	// virtual media over IPMI, no matching media slot).
	ErrUnsupported = errclass.ErrUnsupported
)

// ErrPoolClosed is returned by Pool.Get after Close; it wraps ErrTransient
// (the agent is shutting down).
var ErrPoolClosed = errors.Join(ErrTransient, errors.New("bmc pool is closed"))

// ErrPowerNotConfirmed: the BMC accepted a power change but did not read
// back the new state within Options.PowerTimeout (rackfence-agent
// --bmc-power-timeout). It wraps ErrFailed: the host may not have changed
// state, so the change is retried with backoff and counted.
var ErrPowerNotConfirmed = fmt.Errorf("%w: the BMC did not read back the power change", ErrFailed)
