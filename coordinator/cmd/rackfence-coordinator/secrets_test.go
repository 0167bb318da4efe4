package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/seal"
)

func TestAdoptKeyring(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &seal.Holder{Path: filepath.Join(t.TempDir(), "secrets.key")}
	cluster, _ := seal.Generate()
	if err := adoptKeyring(h, cluster.Marshal(), log); err != nil {
		t.Fatal(err)
	}
	if h.Get().Primary() != cluster.Primary() {
		t.Fatal("not in use")
	}
	if st, err := os.Stat(h.Path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	if k, err := seal.Load(h.Path); err != nil || k.Primary() != cluster.Primary() {
		t.Fatalf("saved: %v", err)
	}
	// A keyring without a key this member holds is refused.
	other, _ := seal.Generate()
	if err := adoptKeyring(h, other.Marshal(), log); err == nil || !strings.Contains(err.Error(), cluster.Primary()) {
		t.Fatalf("dropping a key: %v", err)
	}
	if err := adoptKeyring(h, []byte("garbage"), log); err == nil {
		t.Fatal("garbage accepted")
	}
	if h.Get().Primary() != cluster.Primary() {
		t.Fatal("a refused keyring replaced the one in use")
	}
}
