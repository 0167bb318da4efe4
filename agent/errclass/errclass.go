// Package errclass holds the agent's error classes: every error a BMC
// connection or a provisioner returns wraps exactly one of them
// (fmt.Errorf("%w: …", errclass.ErrX)), so the agent's state machine can act
// on it with errors.Is whichever layer the error came from. An error
// wrapping none is treated as ErrFailed.
//
// The package imports nothing of the project, so every layer of the agent
// (agent/bmc, agent/provisioner and its implementations, agent itself) can
// depend on it downward. Every layer names the classes
// errclass.ErrX; none re-exports them under a name of its own. The guard's refusal, ErrFenced, is not a class of this
// package: it lives with the guard in agent/guard and is passed through
// every layer unchanged.
package errclass

import "errors"

var (
	// ErrTransient: unreachable, timed out, 5xx, Ironic down. Retried later,
	// not counted as a host error.
	ErrTransient = errors.New("transient")
	// ErrAuth: the BMC refused the credentials (401/403, IPMI RAKP
	// failure). Fix the host's credentials record; retrying will not help.
	ErrAuth = errors.New("bad credentials")
	// ErrFailed: the operation failed (the BMC refused it with a 4xx other
	// than auth and not-found, bmclib reported a failure, or Ironic reached
	// a failure state such as "adopt failed" or "deploy failed").
	ErrFailed = errors.New("failed")
	// ErrNotFound: the provisioner no longer knows the host (Ironic lost the
	// node, e.g. after losing its database). The state machine re-registers.
	ErrNotFound = errors.New("node not found")
	// ErrUnsupported: the BMC, the protocol or the driver cannot do this
	// (404/501, no virtual media over IPMI, no matching media slot).
	ErrUnsupported = errors.New("unsupported")
)
