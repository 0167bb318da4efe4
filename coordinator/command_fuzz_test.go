package coordinator

import (
	"testing"

	"github.com/hashicorp/raft"
	"github.com/rackfence/rackfence/coordinator/seal"
)

// FuzzApplyLogEntry feeds arbitrary log entries to the FSM: decoding and
// applying must refuse garbage without panicking.
func FuzzApplyLogEntry(f *testing.F) {
	for _, c := range []Command{PutHostCmd{Host: host("h1", "r1")}, LeaseAcquireCmd{Rack: "r1", Holder: "a"}, StatusCmd{Rack: "r1", Name: "h1"}} {
		b, _ := Encode(c)
		f.Add(b)
		f.Add(EncodeBatch([][]byte{b, b}))
	}
	sealed := PutSealedCredentialsCmd{Name: "c", Username: "u", Sealed: seal.Sealed{KeyID: "k1", Nonce: make([]byte, 12), Ciphertext: []byte("0123456789abcdef")}}
	for _, c := range []Command{sealed, ResealCredentialsCmd{Name: "c", Index: 2, Sealed: sealed.Sealed}} {
		b, _ := Encode(c)
		f.Add(b)
	}
	f.Add([]byte("\x0b\x01" + `{"name":"c1","username":"admin","password":"old"}`)) // legacy plaintext body
	f.Fuzz(func(t *testing.T, b []byte) {
		fsm := NewFSM()
		fsm.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: b})
	})
}
