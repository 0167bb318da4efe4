package agent

import "errors"

// Errors of the agent.
var (
	// ErrLeaseLost ends a session: the lease deadline passed, a renewal was
	// refused, or the coordinator refused a write as stale. The agent drops
	// all host state and stands by.
	ErrLeaseLost = errors.New("rack lease lost")
	// ErrShutdown ends a session because the agent is stopping.
	ErrShutdown = errors.New("agent shutting down")
)
