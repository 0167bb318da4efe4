package fsm

import (
	"errors"
	"fmt"
)

// StopReason says why a member stopped applying its log: the first entry
// it cannot apply (a command type or body version this binary does not
// know). Such an entry is never skipped and never answered as an error
// result: either would leave this member's state different from its
// peers' at the same index. The member stops at the entry instead (no
// further entries, no snapshot past it, Raft shut down so it neither
// votes, leads nor serves reads) until it runs a binary that knows it.
type StopReason struct {
	// Index is the log entry this member cannot apply.
	Index uint64 `json:"index"`
	// Type and Version are the entry's (or, in a batch, the first part's
	// it cannot apply) command type and body version.
	Type    uint8 `json:"type"`
	Version uint8 `json:"version"`
	// Message is what to tell the operator.
	Message string `json:"message"`
}

func (r *StopReason) Error() string { return r.Message }

// Is makes errors.Is(err, ErrStopped) true.
func (r *StopReason) Is(target error) bool { return target == ErrStopped }

// newStopReason builds the reason for entry index whose command (data) this
// binary cannot apply.
func newStopReason(known map[CmdType]byte, index uint64, data []byte) *StopReason {
	r := &StopReason{Index: index}
	if len(data) > 0 {
		r.Type = data[0]
	}
	if len(data) > 1 {
		r.Version = data[1]
	}
	if known := known[CmdType(r.Type)]; known == 0 {
		r.Message = fmt.Sprintf("log entry %d has command type %d that this binary does not know: upgrade this member", index, r.Type)
	} else {
		r.Message = fmt.Sprintf("log entry %d has command type %d at body version %d, newer than this binary reads (%d): upgrade this member",
			index, r.Type, r.Version, known)
	}
	return r
}

// unknownPart returns the first encoded command of an entry this binary
// cannot apply (nil when it knows them all). It reads only the type and
// version bytes; an entry that fails for another reason (a corrupt body)
// fails alike on every member and is answered as an error result.
func unknownPart(known map[CmdType]byte, data []byte) []byte {
	if len(data) < 2 {
		return nil
	}
	if CmdType(data[0]) != CmdBatch {
		if !knows(known, data) {
			return data
		}
		return nil
	}
	parts, err := DecodeBatch(data)
	if errors.Is(err, ErrUnknownCommand) {
		return data
	}
	for _, p := range parts {
		if len(p) >= 2 && CmdType(p[0]) != CmdBatch && !knows(known, p) {
			return p
		}
	}
	return nil
}

// knows reports whether this binary applies an encoded command's type and
// body version.
func knows(known map[CmdType]byte, p []byte) bool {
	return p[1] >= 1 && p[1] <= known[CmdType(p[0])]
}

// Stopped returns why this FSM stopped applying, or nil.
func (f *FSM) Stopped() *StopReason { return f.stopped.Load() }
