package coordinator

import (
	"errors"
	"fmt"

	"github.com/rackfence/rackfence/shared/api"
)

// Error is a refusal decided by the FSM or the store: it carries the API
// error code (shared/api Code*) so the HTTP layer can answer it unchanged.
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

// Is makes errors.Is(err, api.ErrNotFound) (any sentinel of shared/api's
// wire-error table) true for a refusal carrying that code.
func (e *Error) Is(target error) bool { return api.MatchesCode(e.Code, target) }

func newErr(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) *Error { return newErr(api.CodeNotFound, format, a...) }
func conflict(format string, a ...any) *Error { return newErr(api.CodeConflict, format, a...) }

// Errors the store returns.
var (
	// ErrNotLeader means this node cannot accept the request because it is
	// not the Raft leader (or not yet ready to serve as one): forward it to
	// the leader, or retry after a short delay.
	ErrNotLeader = errors.New("this node is not the leader; retry against the leader")
	// ErrNoLeader means the cluster has no known leader right now.
	ErrNoLeader = errors.New("the cluster has no leader right now; retry in a second")
	// ErrOutcomeUnknown means a write was handed to Raft but its outcome
	// is unknown: leadership was lost before it committed (the entry may
	// still commit under the next leader), or the caller stopped waiting
	// for it. It may have been applied: read before repeating it, never
	// repeat it blindly on another member (a held copy can land after a
	// newer write).
	ErrOutcomeUnknown = errors.New("the write was submitted but its outcome is unknown; it may have been applied")
	// ErrBusy means the leader could not take a write in time (raft's
	// ErrEnqueueTimeout: the command never entered the log, so it was not
	// applied and repeating it is safe). Answered as 503 no_leader.
	ErrBusy = errors.New("the leader is too busy to take the write (it was not applied); retry in a second")
	// ErrShutdown means the store is shutting down.
	ErrShutdown = errors.New("the coordinator is shutting down")
	// ErrUnknownCommand means a log entry carries a command type or
	// version this binary does not know: upgrade this node.
	ErrUnknownCommand = errors.New("unknown command type or version in the Raft log; this binary is older than the cluster")
	// ErrLogStoreMismatch means the data dir's Raft log was written by the
	// other log store (Config.LogStore): start with the store it was
	// written with, or re-join the member with a fresh data dir to switch.
	ErrLogStoreMismatch = errors.New("the data dir's Raft log was written by another log store")
	// ErrLogUnreadable means the data dir's raft-wal log cannot be read
	// back (the raft-wal fault described at LogStoreWAL): the member must
	// re-join with an empty data dir.
	ErrLogUnreadable = errors.New("the data dir's Raft log cannot be read")
	// ErrSnapshotVersion means a snapshot was written by an unknown version.
	ErrSnapshotVersion = errors.New("snapshot has an unknown format version; this binary is older than the cluster")
	// ErrDataDirNotEmpty means restore was pointed at a data dir that
	// already holds files.
	ErrDataDirNotEmpty = errors.New("the data dir is not empty")
	// ErrSecretsKey means the secrets key file cannot open the sealed
	// records of a backup.
	ErrSecretsKey = errors.New("the secrets key file cannot open the backup's sealed records")
)

// Errors of the version gate (fsm_stop.go); a write the gate refuses is an
// *Error with code api.CodeUpgradeRequired (gate.go).
var (
	// ErrStopped means this member stopped applying its log at an entry
	// its binary does not know (the *StopReason names it): upgrade this
	// member's binary and restart it.
	ErrStopped = errors.New("this member stopped applying the Raft log; upgrade its binary")
)
