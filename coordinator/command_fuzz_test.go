package coordinator

import (
	"testing"

	"github.com/hashicorp/raft"
)

// FuzzApplyLogEntry feeds arbitrary log entries to the FSM: decoding and
// applying must refuse garbage without panicking.
func FuzzApplyLogEntry(f *testing.F) {
	for _, c := range []Command{PutHostCmd{Host: host("h1", "r1")}, LeaseAcquireCmd{Rack: "r1", Holder: "a"}, StatusCmd{Rack: "r1", Name: "h1"}} {
		b, _ := Encode(c)
		f.Add(b)
		f.Add(EncodeBatch([][]byte{b, b}))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsm := NewFSM()
		fsm.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: b})
	})
}
