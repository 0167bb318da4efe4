package fsm

import (
	"errors"
	"fmt"

	"github.com/rackfence/rackfence/shared/wire"
)

// Error is a refusal decided by the FSM or the store: it carries the API
// error code (shared/wire Code*) so the HTTP layer can answer it unchanged.
type Error struct {
	Code    string
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// Is makes errors.Is(err, wire.ErrNotFound) (any sentinel of shared/wire's
// wire-error table) true for a refusal carrying that code.
func (e *Error) Is(target error) bool { return wire.MatchesCode(e.Code, target) }

func newErr(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) *Error { return newErr(wire.CodeNotFound, format, a...) }
func conflict(format string, a ...any) *Error { return newErr(wire.CodeConflict, format, a...) }

// Errors of decoding the log and snapshots.
var (
	// ErrUnknownCommand means a log entry carries a command type or
	// version this binary does not know: upgrade this node.
	ErrUnknownCommand = errors.New("unknown command type or version in the Raft log; this binary is older than the cluster")
	// ErrSnapshotVersion means a snapshot was written by an unknown version.
	ErrSnapshotVersion = errors.New("snapshot has an unknown format version; this binary is older than the cluster")
)

// Errors of the version gate (fsm_stop.go); a write the gate refuses is an
// *Error with code wire.CodeUpgradeRequired (coordinator/gate.go).
var (
	// ErrStopped means this member stopped applying its log at an entry
	// its binary does not know (the *StopReason names it): upgrade this
	// member's binary and restart it.
	ErrStopped = errors.New("this member stopped applying the Raft log; upgrade its binary")
)
