package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
)

func sealedPW(id string) *seal.Sealed {
	return &seal.Sealed{KeyID: "k1", Nonce: []byte("nonce-" + id), Ciphertext: []byte("ct-" + id)}
}

// TestBMCAccountRotationFenced: the holder records a pending password and
// confirms it (the pending becomes current); after the lease moves the
// old holder can neither record nor confirm; the new holder's pending
// keeps the confirmed one beside it; a confirm of another epoch's
// pending is refused; a snapshot carries the record.
func TestBMCAccountRotationFenced(t *testing.T) {
	h, l := opHost(t, wire.StateProvisioned)
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	w := func(epoch uint64, op string, pw *seal.Sealed) BMCAccountCmd {
		return BMCAccountCmd{Rack: "r1", Name: "h1", Epoch: epoch, Op: op, Username: "rackfence-default", Sealed: pw, Time: at}
	}
	h.refused(w(l.Epoch, wire.BMCAccountOpConfirm, nil), wire.CodeConflict)
	h.ok(w(l.Epoch, wire.BMCAccountOpPending, sealedPW("1")))
	got, _ := h.f.BMCAccount("h1")
	if got.Sealed != nil || got.BMC == nil || got.BMC.State != wire.BMCAccountPending || got.BMC.Pending == nil || got.BMC.PendingEpoch != l.Epoch {
		t.Fatalf("after pending: %+v %+v", got, got.BMC)
	}
	h.ok(w(l.Epoch, wire.BMCAccountOpConfirm, nil))
	got, _ = h.f.BMCAccount("h1")
	if got.Sealed == nil || string(got.Sealed.Ciphertext) != "ct-1" || got.BMC.Pending != nil || got.BMC.State != wire.BMCAccountConfirmed || got.BMC.Epoch != l.Epoch {
		t.Fatalf("after confirm: %+v %+v", got, got.BMC)
	}
	if evs := events(t, h.f); len(evs) == 0 || evs[len(evs)-1].Reason != wire.ReasonBMCAccountRotated {
		t.Fatalf("no rotation event: %+v", evs)
	}

	h.ok(LeaseExpireCmd{Rack: "r1", Epoch: l.Epoch, RenewIndex: h.f.s.Racks["r1"].Lease.RenewIndex})
	l2 := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "b", TTL: 10 * time.Second}).(wire.Lease)
	h.refused(w(l.Epoch, wire.BMCAccountOpPending, sealedPW("stale")), wire.CodeStaleEpoch)
	h.refused(w(l.Epoch, wire.BMCAccountOpConfirm, nil), wire.CodeStaleEpoch)
	other := w(l2.Epoch, wire.BMCAccountOpPending, sealedPW("2"))
	other.Username = "someone-else"
	h.refused(other, wire.CodeConflict)
	h.ok(w(l2.Epoch, wire.BMCAccountOpPending, sealedPW("2")))
	got, _ = h.f.BMCAccount("h1")
	if string(got.Sealed.Ciphertext) != "ct-1" || string(got.BMC.Pending.Ciphertext) != "ct-2" {
		t.Fatalf("a pending write lost the current password: %+v %+v", got, got.BMC)
	}

	var buf bytes.Buffer
	if err := h.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	g := NewFSM()
	if err := g.Restore(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if r, ok := g.BMCAccount("h1"); !ok || r.BMC == nil || r.BMC.Pending == nil || r.BMC.PendingEpoch != l2.Epoch {
		t.Fatalf("restored: %+v", r)
	}
	// A re-seal (secrets reencrypt) swaps the current password only.
	cur, _ := h.f.BMCAccount("h1")
	h.ok(ResealCredentialsCmd{Name: BMCAccountRecord("h1"), Index: cur.Index, Sealed: *sealedPW("resealed")})
	if got, _ := h.f.BMCAccount("h1"); got.BMC == nil || got.BMC.Pending == nil || got.BMC.PendingEpoch != l2.Epoch || string(got.Sealed.Ciphertext) != "ct-resealed" {
		t.Fatalf("a re-seal lost the BMC account's state: %+v %+v", got, got.BMC)
	}
	// Off is recorded with its reason, once as an event.
	off := BMCAccountCmd{Rack: "r1", Name: "h1", Epoch: l2.Epoch, Op: wire.BMCAccountOpOff, Reason: "no free account slot", Time: at}
	h.ok(off)
	n := len(events(t, h.f))
	h.ok(off)
	if got := len(events(t, h.f)); got != n {
		t.Errorf("the same off twice wrote %d events", got-n)
	}
	// A removed host's record goes with it.
	h.ok(PutHostCmd{Host: host("h2", "r1")})
	h.ok(BMCAccountCmd{Rack: "r1", Name: "h2", Epoch: l2.Epoch, Op: wire.BMCAccountOpPending, Username: "rackfence-default", Sealed: sealedPW("h2"), Time: at})
	h.ok(DeleteHostCmd{Name: "h2"})
	if _, ok := h.f.BMCAccount("h2"); ok {
		t.Fatal("the BMC account record outlived its host")
	}
}

func events(t *testing.T, f *FSM) []wire.Event {
	t.Helper()
	evs, _, ok := f.Events("h1")
	if !ok {
		t.Fatal("no host h1")
	}
	return evs
}
