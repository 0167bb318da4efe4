package bmc

import (
	"errors"

	"github.com/rackfence/rackfence/agent/provisioner"
)

// Error classes. Every error this package returns wraps exactly one of them
// (or ErrFenced, defined in guard.go), so the agent's state machine can act
// with errors.Is. They are the provisioner's classes, re-exported here so
// callers of agent/bmc need not import agent/provisioner.
var (
	// ErrAuth: the BMC refused the credentials (401/403, IPMI RAKP failure).
	// Fix the host's credentials record; retrying will not help.
	ErrAuth = provisioner.ErrAuth
	// ErrTransient: the BMC was unreachable, timed out, or answered 5xx.
	// Retry later.
	ErrTransient = provisioner.ErrTransient
	// ErrFailed: the BMC refused the operation (4xx other than auth and
	// not-found), or bmclib reported a failure.
	ErrFailed = provisioner.ErrFailed
	// ErrUnsupported: the BMC or the protocol cannot do this (404/501, no
	// virtual media over IPMI, no matching media slot).
	ErrUnsupported = provisioner.ErrUnsupported
)

// ErrPoolClosed is returned by Pool.Get after Close; it wraps ErrTransient
// (the agent is shutting down). ErrFenced, the guard's refusal, is in
// guard.go.
var ErrPoolClosed = errors.Join(ErrTransient, errors.New("bmc pool is closed"))
