package coordinator

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func testKeys(t testing.TB) *seal.Holder {
	t.Helper()
	k, err := seal.Generate()
	if err != nil {
		t.Fatal(err)
	}
	h := &seal.Holder{Path: "/test/secrets.key"}
	h.Set(k)
	return h
}

// TestLegacyPutCredentialsBytes applies a PutCredentials entry exactly as
// binaries before sealing wrote it (type 11, body version 1, JSON with the
// plaintext password): it still decodes and reveals.
func TestLegacyPutCredentialsBytes(t *testing.T) {
	old := []byte("\x0b\x01" + `{"name":"c1","username":"admin","password":"old-plain-pw"}`)
	f := fsm.NewFSM()
	r := f.Apply(7, old).(fsm.Result)
	if r.Err != nil || r.Value != true {
		t.Fatalf("apply old bytes: %+v", r)
	}
	c, ok := f.Credentials("c1")
	if !ok || c.Username != "admin" || c.Plaintext != "old-plain-pw" || c.Sealed != nil || c.Index != 7 {
		t.Fatalf("legacy record: %+v", c)
	}
	s := &Store{cfg: Config{NodeID: "n1"}, fsm: f}
	if pw, err := s.RevealPassword("c1", c); err != nil || pw != "old-plain-pw" {
		t.Fatalf("reveal legacy without any key: %q %v", pw, err)
	}
	if _, plain, total, _ := f.SecretsUsage(); plain != 1 || total != 1 {
		t.Fatalf("usage: plaintext %d total %d", plain, total)
	}
}

func TestSealedCredentialsCommands(t *testing.T) {
	keys := testKeys(t)
	h := newFSMT(t)
	s := &Store{cfg: Config{NodeID: "n1", Secrets: keys}, fsm: h.f}
	cmd, err := s.SealCredentialsData("c1", "admin", "s3cret-pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fsm.Encode(cmd)
	if strings.Contains(string(b), "s3cret-pw") || b[0] != byte(fsm.CmdPutSealedCredentials) {
		t.Fatalf("encoded command holds the password or has type %d: %q", b[0], b)
	}
	if v := h.ok(cmd); v != true {
		t.Fatal("first put must report created")
	}
	if v := h.ok(cmd); v != false {
		t.Fatal("second put must report updated")
	}
	c, _ := h.f.Credentials("c1")
	if c.Sealed == nil || c.Plaintext != "" || c.Sealed.KeyID != keys.Get().Primary() {
		t.Fatalf("stored %+v", c)
	}
	if pw, err := s.RevealPassword("c1", c); err != nil || pw != "s3cret-pw" {
		t.Fatalf("reveal: %q %v", pw, err)
	}
	// Moved to another name: refused, not revealed.
	if _, err := s.RevealPassword("c2", c); err == nil || !strings.Contains(err.Error(), "altered") {
		t.Fatalf("a sealed value under another name must not open: %v", err)
	}
	// A member without the key: a clear refusal naming the key and file.
	bare := &Store{cfg: Config{NodeID: "n2", Secrets: &seal.Holder{Path: "/etc/rf/secrets.key"}}, fsm: h.f}
	_, err = bare.RevealPassword("c1", c)
	var e *fsm.Error
	if !errors.As(err, &e) || e.Code != wire.CodeSecretsKeyMissing || !strings.Contains(e.Message, c.Sealed.KeyID) ||
		!strings.Contains(e.Message, "/etc/rf/secrets.key") || !strings.Contains(e.Message, "SIGHUP") {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := bare.SealCredentialsData("c1", "u", "p", nil); !errors.As(err, &e) || e.Code != wire.CodeSecretsKeyMissing {
		t.Fatalf("seal without key: %v", err)
	}
	// A member with other keys only: the message lists what it has.
	other := testKeys(t)
	wrong := &Store{cfg: Config{NodeID: "n3", Secrets: other}, fsm: h.f}
	if _, err := wrong.RevealPassword("c1", c); !errors.As(err, &e) || !strings.Contains(e.Message, other.Get().Primary()) || !strings.Contains(e.Message, c.Sealed.KeyID) {
		t.Fatalf("unknown key: %v", err)
	}

	// Reseal: compare-and-set on the record's index.
	k2, _ := keys.Get().WithNewKey()
	keys.Set(k2)
	sealed, _ := k2.Seal([]byte("s3cret-pw"), credentialsAAD("c1"))
	h.refused(fsm.ResealCredentialsCmd{Name: "c1", Index: c.Index - 1, Sealed: sealed}, wire.CodeConflict)
	h.refused(fsm.ResealCredentialsCmd{Name: "gone", Index: 1, Sealed: sealed}, wire.CodeNotFound)
	h.ok(fsm.ResealCredentialsCmd{Name: "c1", Index: c.Index, Sealed: sealed})
	c2, _ := h.f.Credentials("c1")
	if c2.Sealed.KeyID != k2.Primary() || c2.Index == c.Index || c2.Username != "admin" {
		t.Fatalf("after reseal: %+v", c2)
	}
	st := s.SecretsStatus()
	if st.Primary != k2.Primary() || st.Credentials != 1 || len(st.Keys) != 2 || st.Keys[1].Credentials != 1 || st.Keys[0].Credentials != 0 {
		t.Fatalf("status: %+v", st)
	}
	// A key that seals records but is not loaded is listed as such.
	st = wrong.SecretsStatus()
	if len(st.Keys) != 2 || st.Keys[1].ID != k2.Primary() || st.Keys[1].Loaded || st.Keys[1].Credentials != 1 {
		t.Fatalf("status of a member lacking the key: %+v", st)
	}
	// And /metrics says so, for alerting.
	reg := prometheus.NewRegistry()
	reg.MustRegister(&secretsCollector{s: wrong})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			got[key] = m.GetGauge().GetValue()
		}
	}
	wantM := map[string]float64{
		"rackfence_secrets_credentials,key=" + other.Get().Primary() + ",loaded=true": 0,
		"rackfence_secrets_credentials,key=" + k2.Primary() + ",loaded=false":         1,
		"rackfence_secrets_plaintext_credentials":                                     0,
		"rackfence_secrets_keys": 1,
	}
	if !reflect.DeepEqual(got, wantM) {
		t.Fatalf("metrics: %v, want %v", got, wantM)
	}
}

// TestSnapshotWithSealedAndLegacyCredentials: both kinds survive a
// snapshot round trip, and the sealed password is not in the snapshot.
func TestSnapshotWithSealedAndLegacyCredentials(t *testing.T) {
	keys := testKeys(t)
	h := newFSMT(t)
	h.ok(fsm.PutCredentialsCmd{Name: "c1", Username: "admin", Password: "password"}) // a legacy plaintext record
	s := &Store{cfg: Config{NodeID: "n1", Secrets: keys}, fsm: h.f}
	cmd, _ := s.SealCredentialsData("sealed-1", "root", "only-in-memory-pw", nil)
	h.ok(cmd)
	dir := t.TempDir()
	snap := snapshotBytes(t, h.f)
	if err := os.WriteFile(filepath.Join(dir, "state.bin"), snap, 0o600); err != nil {
		t.Fatal(err)
	}
	g := restoreBytes(t, snap)
	if !reflect.DeepEqual(creds(g), creds(h.f)) {
		t.Fatalf("creds differ after restore:\n%+v\n%+v", creds(g), creds(h.f))
	}
	c, _ := g.Credentials("sealed-1")
	if pw, err := s.RevealPassword("sealed-1", c); err != nil || pw != "only-in-memory-pw" {
		t.Fatalf("after restore: %q %v", pw, err)
	}
	// The scanner sees into the gzip'd snapshot: the legacy plaintext is
	// found (so a miss below means something), the sealed one is not.
	if hits, _, _ := testenv.FindSecret(dir, []byte("password")); len(hits) == 0 {
		t.Fatal("scanner missed the legacy plaintext password in the snapshot")
	}
	if hits, _, _ := testenv.FindSecret(dir, []byte("only-in-memory-pw")); len(hits) != 0 {
		t.Fatalf("sealed password found in the snapshot: %v", hits)
	}
}

// untar extracts a .tgz into dir.
func untar(t *testing.T, file, dir string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Clean(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(p, fs.FileMode(h.Mode)&0o777)
		case tar.TypeReg:
			b, _ := io.ReadAll(tr)
			if err := os.WriteFile(p, b, fs.FileMode(h.Mode)&0o777); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestUpgradeFromPlaintextDataDir opens a real data dir written by
// rackfence-coordinator before sealing existed (testdata/README.md says
// how it was made): a snapshot holding plaintext credentials, log entries
// after it holding more. Everything reveals; re-encryption seals every
// record; a new snapshot holds none of the old passwords.
func TestUpgradeFromPlaintextDataDir(t *testing.T) {
	testenv.SkipShort(t) // restarts a Raft store: seconds, not the fast layer
	dir := t.TempDir()
	untar(t, "testdata/v1-plaintext-datadir.tgz", dir)
	// The old binary left its snapshot files 0644, directories 0755.
	if st, err := os.Stat(filepath.Join(dir, "snapshots")); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("testdata snapshots dir: %v %v", st.Mode(), err)
	}
	if hits, _, _ := testenv.FindSecret(dir, []byte("legacy-snapshot-pw-7f3a")); len(hits) < 2 {
		t.Fatalf("the old data dir should hold the legacy password in raft.db and the snapshot: %v", hits)
	}
	keys := testKeys(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	port := testenv.FreePort(t, "127.0.0.1")
	open := func() *Store {
		// The fixture predates raft-wal: its log is in raft.db.
		s, err := Open(Config{NodeID: "old-1", DataDir: dir, LogStore: LogStoreBolt, HTTPURL: "http://127.0.0.1:1", RaftAddr: fmt.Sprintf("127.0.0.1:%d", port),
			Logger: log, Secrets: keys})
		if err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, "old data dir leads", func() error {
			if !s.Ready() {
				return fmt.Errorf("state %s", s.State())
			}
			return nil
		})
		return s
	}
	s := open()
	// Open made every file owner-only.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		info, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s is %04o, want %04o", p, info.Mode().Perm(), want)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.ReadBarrier(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"snap-bmc": "legacy-snapshot-pw-7f3a", "log-bmc": "legacy-log-pw-91c2", "filler-001": "filler-pw-001"}
	check := func(when string) {
		for name, pw := range want {
			c, ok := s.FSM().Credentials(name)
			if !ok {
				t.Fatalf("%s: %s missing", when, name)
			}
			got, err := s.RevealPassword(name, c)
			if err != nil || got != pw {
				t.Fatalf("%s: reveal %s: %q %v", when, name, got, err)
			}
		}
	}
	check("before re-encryption")
	if c, _ := s.FSM().Credentials("snap-bmc"); c.Username != "admin2" || c.Sealed != nil {
		t.Fatalf("snap-bmc should be the plaintext update from the log: %+v", c)
	}
	st := s.SecretsStatus()
	if st.Credentials != 262 || st.Plaintext != 262 {
		t.Fatalf("status before: %+v", st)
	}
	res, err := s.Reencrypt(ctx)
	if err != nil || res.Resealed != 262 || res.Unchanged != 0 || len(res.Failed) != 0 {
		t.Fatalf("reencrypt: %+v %v", res, err)
	}
	if res, err := s.Reencrypt(ctx); err != nil || res.Resealed != 0 || res.Unchanged != 262 {
		t.Fatalf("second reencrypt must change nothing: %+v %v", res, err)
	}
	st = s.SecretsStatus()
	if st.Plaintext != 0 || st.Keys[0].Credentials != 262 {
		t.Fatalf("status after: %+v", st)
	}
	check("after re-encryption")
	idx, _, err := s.Snapshot()
	if err != nil || idx < res.Index {
		t.Fatalf("snapshot: %d %v", idx, err)
	}
	s.Close()
	s = open()
	defer s.Close()
	if err := s.ReadBarrier(ctx); err != nil {
		t.Fatal(err)
	}
	check("after restart")
	// The new snapshot holds no old password; raft.db still does (old log
	// entries stay until compaction: docs/operator.md says how to purge).
	snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*"))
	for _, sn := range snaps {
		for _, pw := range want {
			if hits, _, _ := testenv.FindSecret(sn, []byte(pw)); len(hits) > 0 && strings.Contains(sn, fmt.Sprintf("-%d-", idx)) {
				t.Errorf("new snapshot %s holds %s: %v", sn, pw, hits)
			}
		}
		if fi, _ := os.Stat(sn); fi.Mode().Perm() != 0o700 {
			t.Errorf("snapshot dir %s is %04o", sn, fi.Mode().Perm())
		}
	}
}
