package coordinator

import (
	"bytes"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// The store's tests drive an FSM by hand like coordinator/fsm's own tests
// do: encode a command, apply it as the next log entry.

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

type fsmT struct {
	t     *testing.T
	f     *fsm.FSM
	index uint64
}

func newFSMT(t *testing.T) *fsmT { return &fsmT{t: t, f: fsm.NewFSM()} }

// apply encodes c, applies it as the next log entry and returns its result.
func (h *fsmT) apply(c fsm.Command) (any, error) {
	h.t.Helper()
	b, err := fsm.Encode(c)
	if err != nil {
		h.t.Fatal(err)
	}
	h.index++
	r := h.f.Apply(h.index, b).(fsm.Result)
	return r.Value, r.Err
}

func (h *fsmT) ok(c fsm.Command) any {
	h.t.Helper()
	v, err := h.apply(c)
	if err != nil {
		h.t.Fatalf("apply %T: %v", c, err)
	}
	return v
}

func (h *fsmT) refused(c fsm.Command, code string) *fsm.Error {
	h.t.Helper()
	_, err := h.apply(c)
	var e *fsm.Error
	if !errors.As(err, &e) || e.Code != code {
		h.t.Fatalf("apply %T: want refusal %s, got %v", c, code, err)
	}
	return e
}

// applier returns a function that encodes a command, applies it to f as
// the next log entry and returns its value, failing tb on an error.
func applier(tb testing.TB, f *fsm.FSM) func(fsm.Command) any {
	var idx uint64
	return func(c fsm.Command) any {
		tb.Helper()
		data, err := fsm.Encode(c)
		if err != nil {
			tb.Fatal(err)
		}
		idx++
		r := f.Apply(idx, data).(fsm.Result)
		if r.Err != nil {
			tb.Fatal(r.Err)
		}
		return r.Value
	}
}

func host(name, rack string) wire.Host {
	return wire.Host{Name: name, Rack: rack, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9001/redfish/v1/Systems/1", Credentials: "c1"}, Online: true}
}

// snapshotBytes is f's snapshot as raft persists it.
func snapshotBytes(t *testing.T, f *fsm.FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := snap.Encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// restoreBytes is a new FSM restored from snapshot bytes.
func restoreBytes(t *testing.T, b []byte) *fsm.FSM {
	t.Helper()
	g := fsm.NewFSM()
	if err := g.Restore(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	return g
}

// roundTrip writes f's snapshot and restores it into a new FSM.
func roundTrip(t *testing.T, f *fsm.FSM) *fsm.FSM {
	t.Helper()
	return restoreBytes(t, snapshotBytes(t, f))
}

// creds are every credentials record f holds.
func creds(f *fsm.FSM) []fsm.NamedCredentials {
	c, _ := f.AllCredentials()
	return c
}

// gateStore is a store (no Raft) whose voters are ids, with the FSM driven
// by hand, and record, which records a voter's binary and command table
// as SetMemberCmd does: the setting of the version gate's tests.
func gateStore(t *testing.T, ids ...string) (s *Store, h *fsmT, record func(id string, table map[fsm.CmdType]byte, bin string)) {
	return gateStoreWith(t, nil, ids...)
}

// gateStoreWith is gateStore whose own FSM applies (and writes) table
// commands (nil: this binary's).
func gateStoreWith(t *testing.T, commands map[fsm.CmdType]byte, ids ...string) (s *Store, h *fsmT, record func(id string, table map[fsm.CmdType]byte, bin string)) {
	s = &Store{fsm: fsm.New(fsm.Options{Commands: commands}), divergence: newDivergence()}
	s.voters.Store(&ids)
	h = &fsmT{t: t, f: s.fsm}
	record = func(id string, table map[fsm.CmdType]byte, bin string) {
		h.ok(fsm.SetMemberCmd{ID: id, HTTPAddr: "http://" + id, Version: &fsm.MemberVersion{Binary: bin, Commands: fsm.WireCommands(table)}})
	}
	return s, h, record
}

// olderVoterStore is gateStore with voters n1, recorded at this binary's
// command table, and n2, recorded as binary bin at that table changed by
// older (a type at an older version, or without it): the setting of a
// test of what the leader writes while a voter lags. record moves a voter
// on ("new": this binary's table).
func olderVoterStore(t *testing.T, bin string, older func(table map[fsm.CmdType]byte)) (s *Store, record func(id string, table map[fsm.CmdType]byte, bin string)) {
	s, _, record = gateStore(t, "n1", "n2")
	record("n1", s.fsm.Commands(), "new")
	old := maps.Clone(s.fsm.Commands())
	older(old)
	record("n2", old, bin)
	return s, record
}

// writtenForm encodes c, a form the leader writes, and fails the test
// when the leader's own gate refuses it.
func writtenForm(t *testing.T, s *Store, c fsm.Command) []byte {
	t.Helper()
	b, err := fsm.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.gate(b); err != nil {
		t.Fatalf("the form the leader writes is refused by the gate: %v", err)
	}
	return b
}
