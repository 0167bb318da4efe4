package coordinator

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestSealedCredentialsData: a record's data map is sealed beside the
// password (never in the entry, the FSM or a snapshot), its keys are
// listed in the clear, a record without data is still written as body
// version 1 (older binaries apply it), one with data as version 2, and a
// re-seal carries the data under the new key.
func TestSealedCredentialsData(t *testing.T) {
	keys := testKeys(t)
	h := newFSMT(t)
	s := &Store{cfg: Config{NodeID: "n1", Secrets: keys}, fsm: h.f}
	data := map[string]string{"userData": "#cloud-config\nrf-data-canary-7c1e", "networkData": `{"links":[]}`}
	sealedCredsVersion := fsm.NewFSM().Commands()[fsm.CmdPutSealedCredentials] // the newest body
	cmd, err := s.SealCredentialsData("ud1", "", "", data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fsm.Encode(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != byte(fsm.CmdPutSealedCredentials) || b[1] != sealedCredsVersion {
		t.Fatalf("a record with data must be type %d version %d, got %d %d", fsm.CmdPutSealedCredentials, sealedCredsVersion, b[0], b[1])
	}
	if strings.Contains(string(b), "rf-data-canary-7c1e") || strings.Contains(string(b), "links") {
		t.Fatalf("encoded command holds a data value: %q", b)
	}
	back, err := fsm.Decode(b)
	if err != nil || !reflect.DeepEqual(back, cmd) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	// Without data: version 1, as before data maps existed.
	plain, _ := s.SealCredentialsData("bmc1", "admin", "pw", nil)
	if pb, _ := fsm.Encode(plain); pb[1] != 1 {
		t.Fatalf("a record without data must stay body version 1, got %d", pb[1])
	}
	// A binary knowing only version 1 refuses version 2 (ErrUnknownCommand
	// from maxVersion), so the check above matters.
	if tbl := fsm.NewFSM().Commands(); tbl[fsm.CmdPutSealedCredentials] != 2 || tbl[fsm.CmdResealCredentials] != 2 {
		t.Fatal("maxVersion of the sealed-credentials commands")
	}

	h.ok(back)
	c, ok := h.f.Credentials("ud1")
	if !ok || c.Username != "" || !reflect.DeepEqual(c.DataKeys, []string{"networkData", "userData"}) || c.Data == nil {
		t.Fatalf("stored %+v", c)
	}
	got, err := s.RevealData("ud1", c)
	if err != nil || !reflect.DeepEqual(got, data) {
		t.Fatalf("reveal data: %v %v", got, err)
	}
	// Data sealed for one record does not open as another's, nor as a
	// password.
	if _, err := s.RevealData("other", c); err == nil {
		t.Fatal("data opened under another record's name")
	}
	if _, err := s.openSealed(keys.Get(), "ud1", *c.Data, credentialsAAD("ud1")); err == nil {
		t.Fatal("data opened as the password")
	}
	// The returned keys are a copy.
	c.DataKeys[0] = "x"
	if c2, _ := h.f.Credentials("ud1"); c2.DataKeys[0] != "networkData" {
		t.Fatal("DataKeys shares the FSM's slice")
	}

	// Re-seal under a new key: a version 2 re-seal moves the data too; a
	// version 1 re-seal (from an older leader) keeps it as it was.
	k2, _ := keys.Get().WithNewKey()
	keys.Set(k2)
	c, _ = h.f.Credentials("ud1")
	pw, _ := k2.Seal(nil, credentialsAAD("ud1"))
	h.ok(fsm.ResealCredentialsCmd{Name: "ud1", Index: c.Index, Sealed: pw})
	c1, _ := h.f.Credentials("ud1")
	if c1.Data.KeyID != c.Data.KeyID || !reflect.DeepEqual(c1.DataKeys, c.DataKeys) {
		t.Fatalf("a v1 re-seal must keep the data: %+v", c1)
	}
	sd, err := sealData(k2, "ud1", data)
	if err != nil {
		t.Fatal(err)
	}
	rs := fsm.ResealCredentialsCmd{Name: "ud1", Index: c1.Index, Sealed: pw, Data: sd}
	rb, _ := fsm.Encode(rs)
	if rb[1] != sealedCredsVersion {
		t.Fatalf("a re-seal with data must be version 2, got %d", rb[1])
	}
	rback, err := fsm.Decode(rb)
	if err != nil {
		t.Fatal(err)
	}
	h.ok(rback)
	c2, _ := h.f.Credentials("ud1")
	if c2.Data.KeyID != k2.Primary() || !reflect.DeepEqual(c2.DataKeys, c.DataKeys) {
		t.Fatalf("after re-seal: %+v", c2)
	}
	if got, err := s.RevealData("ud1", c2); err != nil || !reflect.DeepEqual(got, data) {
		t.Fatalf("reveal after re-seal: %v %v", got, err)
	}

	// A snapshot carries the sealed data and never the values.
	dir := t.TempDir()
	snap := snapshotBytes(t, h.f)
	g := restoreBytes(t, snap)
	if !reflect.DeepEqual(creds(g), creds(h.f)) {
		t.Fatalf("creds differ after restore:\n%+v\n%+v", creds(g), creds(h.f))
	}
	c3, _ := g.Credentials("ud1")
	if got, err := s.RevealData("ud1", c3); err != nil || !reflect.DeepEqual(got, data) {
		t.Fatalf("reveal after restore: %v %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.bin"), snap, 0o600); err != nil {
		t.Fatal(err)
	}
	if hits, _, _ := testenv.FindSecret(dir, []byte("networkData")); len(hits) == 0 {
		t.Fatal("the scanner missed the (clear) data key in the snapshot: it proves nothing")
	}
	if hits, _, _ := testenv.FindSecret(dir, []byte("rf-data-canary-7c1e")); len(hits) != 0 {
		t.Fatalf("a data value is in the snapshot: %v", hits)
	}
}

// TestHostDataRefsNameRecords: a host naming a record in any data field
// lets its rack's agent reveal it; no other rack's.
func TestHostDataRefsNameRecords(t *testing.T) {
	h := newFSMT(t)
	for i, set := range []func(*wire.Host){
		func(a *wire.Host) { a.UserData = &wire.SecretReference{Name: "rec"} },
		func(a *wire.Host) { a.NetworkData = &wire.SecretReference{Name: "rec"} },
		func(a *wire.Host) { a.MetaData = &wire.SecretReference{Name: "rec"} },
		func(a *wire.Host) { a.PreprovisioningNetworkData = &wire.SecretReference{Name: "rec"} },
	} {
		a := host("h1", "r1")
		h.ok(fsm.PutHostCmd{Host: a, Time: t0})
		if h.f.RackUsesCredentials("r1", "rec") {
			t.Fatalf("%d: a host naming no record uses it", i)
		}
		set(&a)
		h.ok(fsm.PutHostCmd{Host: a, Time: t0})
		if !h.f.RackUsesCredentials("r1", "rec") || h.f.RackUsesCredentials("r2", "rec") {
			t.Fatalf("%d: RackUsesCredentials", i)
		}
	}
}
