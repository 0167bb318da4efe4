package fsm

import (
	"testing"

	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
)

// FuzzApplyLogEntry feeds arbitrary log entries to the FSM: decoding and
// applying must refuse garbage without panicking.
func FuzzApplyLogEntry(f *testing.F) {
	for _, c := range []Command{PutHostCmd{Host: host("h1", "r1")}, LeaseAcquireCmd{Rack: "r1", Holder: "a"}, StatusCmd{Rack: "r1", Name: "h1"},
		PutOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Intent: wire.Intent{Requester: "k", Mode: wire.RebootSoft}},
		DeleteOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Requester: "k"},
		RackStatusCmd{Rack: "r1", Epoch: 1, Hosts: []wire.RackHostReport{{Name: "h1", Status: &wire.HostStatus{}}, {Name: "h2", Touch: 3}}},
		// Body version 3: hosts named with their createdIndex.
		RackStatusCmd{Rack: "r1", Epoch: 1, Hosts: []wire.RackHostReport{{Name: "h1", Created: 1, Status: &wire.HostStatus{}, Remove: true}, {Name: "h2", Touch: 3, Created: 2}}}} {
		b, _ := Encode(c)
		f.Add(b)
		bb := EncodeBatch([][]byte{b, b})
		f.Add(bb)
		f.Add(deflated(f, CompressedVersion, len(bb), bb)) // as the leader writes large entries
	}
	sealed := PutSealedCredentialsCmd{Name: "c", Username: "u", Sealed: seal.Sealed{KeyID: "k1", Nonce: make([]byte, 12), Ciphertext: []byte("0123456789abcdef")}}
	withData := sealed
	withData.DataKeys, withData.Data = []string{"userData"}, &sealed.Sealed // body version 2
	for _, c := range []Command{sealed, ResealCredentialsCmd{Name: "c", Index: 2, Sealed: sealed.Sealed}, withData,
		ResealCredentialsCmd{Name: "c", Index: 2, Sealed: sealed.Sealed, Data: &sealed.Sealed}} {
		b, _ := Encode(c)
		f.Add(b)
	}
	f.Add([]byte("\x0b\x01" + `{"name":"c1","username":"admin","password":"old"}`)) // legacy plaintext body
	for _, c := range compatCommands() {
		b, _ := Encode(c)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fsm := NewFSM()
		fsm.Apply(1, b)
	})
}

// FuzzDecodeCommand feeds arbitrary bytes to the command decoder (v1 JSON
// and v2 binary bodies): it must refuse garbage without panicking, and
// whatever it accepts must encode and decode to the same command.
func FuzzDecodeCommand(f *testing.F) {
	for _, c := range compatCommands() {
		b, _ := Encode(c)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		e, err := Encode(c)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", c, err)
		}
		if _, err := Decode(e); err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", c, err)
		}
	})
}
