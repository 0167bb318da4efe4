package coordinator

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// memSink is a raft.SnapshotSink in memory that records how it ended.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (*memSink) ID() string      { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { s.closed = true; return nil }

// closeTracker is a snapshot reader that records its Close.
type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

// TestRaftFSMAdapter: raft's entries reach the FSM as indexes and bytes
// (a command is applied, any other entry and a configuration only count
// as applied), and a snapshot persisted through the adapter restores
// through it (the reader closed after).
func TestRaftFSMAdapter(t *testing.T) {
	f := fsm.NewFSM()
	a := raftFSM{f}
	b, err := fsm.Encode(fsm.PutHostCmd{Host: host("h1", "r1"), Time: t0})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := a.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: b}).(fsm.Result); !ok || r.Err != nil {
		t.Fatalf("command entry: %+v", r)
	}
	if _, ok := f.Host("h1"); !ok {
		t.Fatal("the command entry was not applied")
	}
	if r := a.Apply(&raft.Log{Index: 2, Type: raft.LogNoop}); r != nil || f.AppliedIndex() != 2 {
		t.Fatalf("a no-op entry: result %v, applied %d", r, f.AppliedIndex())
	}
	a.StoreConfiguration(5, raft.Configuration{})
	if f.AppliedIndex() != 5 {
		t.Fatalf("a configuration entry: applied %d", f.AppliedIndex())
	}

	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil || !sink.closed || sink.cancelled {
		t.Fatalf("persist: %v closed %v cancelled %v", err, sink.closed, sink.cancelled)
	}
	g := fsm.NewFSM()
	rc := &closeTracker{Reader: bytes.NewReader(sink.Bytes())}
	if err := (raftFSM{g}).Restore(rc); err != nil || !rc.closed {
		t.Fatalf("restore: %v, reader closed %v", err, rc.closed)
	}
	if _, ok := g.Host("h1"); !ok || g.AppliedIndex() != 5 {
		t.Fatalf("restored: applied %d", g.AppliedIndex())
	}

	// A stopped FSM refuses a snapshot through the adapter too.
	unknown := []byte{250, 1}
	if r := a.Apply(&raft.Log{Index: 6, Type: raft.LogCommand, Data: unknown}).(fsm.Result); !errors.Is(r.Err, fsm.ErrStopped) {
		t.Fatalf("unknown entry: %v", r.Err)
	}
	if _, err := a.Snapshot(); !errors.Is(err, fsm.ErrStopped) {
		t.Fatalf("snapshot of a stopped FSM: %v", err)
	}
}
