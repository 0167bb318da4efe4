package coordinator

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// The store's own refusals are *fsm.Error too (one wire-error table).
func newErr(code, format string, a ...any) *fsm.Error {
	return &fsm.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

func notFound(format string, a ...any) *fsm.Error { return newErr(wire.CodeNotFound, format, a...) }

// errCredentialsKey is the refusal when this member cannot open or seal
// a password for lack of a key.
func errCredentialsKey(format string, a ...any) *fsm.Error {
	return newErr(wire.CodeSecretsKeyMissing, format, a...)
}

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
	// for it (a queued write the batcher then drops unapplied). It may
	// have been applied: read before repeating it, never repeat it
	// blindly on another member (a held copy can land after a newer
	// write).
	ErrOutcomeUnknown = errors.New("the write was submitted but its outcome is unknown; it may have been applied")
	// ErrBusy means the leader could not take a write in time (raft's
	// ErrEnqueueTimeout, or a write queue older than the apply timeout:
	// the command never entered the log, so it was not applied and
	// repeating it is safe). Answered as 503 no_leader.
	ErrBusy = errors.New("the leader is too busy to take the write (it was not applied); retry in a second")
	// ErrShutdown means the store is shutting down (it takes no more
	// writes once a stop began).
	ErrShutdown = errors.New("the coordinator is shutting down")
	// ErrLogStoreMismatch means the data dir's Raft log was written by the
	// other log store (Config.LogStore): start with the store it was
	// written with, or re-join the member with a fresh data dir to switch.
	ErrLogStoreMismatch = errors.New("the data dir's Raft log was written by another log store")
	// ErrLogUnreadable means the data dir's raft-wal log cannot be read
	// back (the raft-wal fault described at LogStoreWAL): the member must
	// re-join with an empty data dir.
	ErrLogUnreadable = errors.New("the data dir's Raft log cannot be read")
	// ErrLogWrite means this member could not write its Raft log (a full
	// or failing disk). The error wrapping it names the data dir and the
	// cause. A leader that gets it steps down, and the write it could not
	// append was not applied (repeating it is safe); a follower refuses the
	// leader's entries until a write succeeds, then catches up by itself.
	ErrLogWrite = errors.New("cannot write the Raft log")
	// ErrDataDamaged means a file of the data dir is damaged or missing
	// (raft.db cut short, snapshots/ gone while the log was compacted, no
	// snapshot that opens): the member refuses to start instead of
	// crashing or starting from part of its state. The error names the
	// file and the runbook (DataRunbook).
	ErrDataDamaged = errors.New("a data dir file is damaged or missing")
	// ErrDataDirNotEmpty means restore was pointed at a data dir that
	// already holds files.
	ErrDataDirNotEmpty = errors.New("the data dir is not empty")
	// ErrSecretsKey means the secrets key file cannot open the sealed
	// records of a backup.
	ErrSecretsKey = errors.New("the secrets key file cannot open the backup's sealed records")
)

// StuckError is Shutdown's answer when its context ended before Raft shut
// down: Waiting names the innermost Raft function of each goroutine still
// running (with a count when several), e.g. "raft.(*netPipeline).AppendEntries"
// for replication blocked on a follower that does not read.
type StuckError struct {
	Waited  time.Duration
	Waiting []string
}

func (e *StuckError) Error() string {
	if len(e.Waiting) == 0 {
		// Raft's goroutines had all ended when they were listed: what
		// was left was closing the transport and the stores.
		return fmt.Sprintf("the store did not close within %s: raft has shut down; its transport and log stores are still closing", e.Waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("raft did not shut down within %s; still running: %s", e.Waited.Round(time.Millisecond), strings.Join(e.Waiting, ", "))
}
