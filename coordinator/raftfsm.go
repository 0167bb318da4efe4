package coordinator

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// raftFSM is what hashicorp/raft drives: raft.FSM (and its
// ConfigurationStore hook) over coordinator/fsm, which knows only indexes,
// bytes, readers and writers.
type raftFSM struct{ f *fsm.FSM }

var (
	_ raft.FSM                = raftFSM{}
	_ raft.ConfigurationStore = raftFSM{}
)

// Apply applies a command entry; any other entry only counts as applied.
func (a raftFSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		a.f.MarkApplied(l.Index)
		return nil
	}
	return a.f.Apply(l.Index, l.Data)
}

// StoreConfiguration: configuration entries count as applied, so a read
// waiting for the commit index after a membership change does not wait
// for the next write.
func (a raftFSM) StoreConfiguration(index uint64, _ raft.Configuration) { a.f.MarkApplied(index) }

// Snapshot captures the state; raft persists it while applying goes on.
func (a raftFSM) Snapshot() (raft.FSMSnapshot, error) {
	s, err := a.f.Snapshot()
	if err != nil {
		return nil, err
	}
	return raftSnapshot{s}, nil
}

// Restore replaces the state with a snapshot raft hands over.
func (a raftFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return a.f.Restore(rc)
}

// raftSnapshot is raft.FSMSnapshot over a captured state.
type raftSnapshot struct{ s *fsm.Snapshot }

// Persist writes the snapshot to raft's sink.
func (r raftSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := r.s.Encode(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("write snapshot: %w", err)
	}
	return sink.Close()
}

// Release is a no-op: the snapshot holds only immutable records.
func (raftSnapshot) Release() {}
