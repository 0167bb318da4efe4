package seal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSealOpenRoundTripAndRotation(t *testing.T) {
	k1, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	aad := []byte("c/r1-bmc")
	s1, err := k1.Seal([]byte("hunter2"), aad)
	if err != nil {
		t.Fatal(err)
	}
	if s1.KeyID != k1.Primary() || len(s1.Nonce) != NonceSize {
		t.Fatalf("sealed %+v under %s", s1, k1.Primary())
	}
	if bytes.Contains(s1.Ciphertext, []byte("hunter2")) {
		t.Fatal("plaintext visible in the ciphertext")
	}
	// Two seals of the same value differ (random nonce).
	s1b, _ := k1.Seal([]byte("hunter2"), aad)
	if bytes.Equal(s1.Ciphertext, s1b.Ciphertext) {
		t.Fatal("same ciphertext twice")
	}
	// Rotation: a new primary; values under the old key still open.
	k2, err := k1.WithNewKey()
	if err != nil {
		t.Fatal(err)
	}
	if k2.Primary() == k1.Primary() || len(k2.IDs()) != 2 || k2.IDs()[0] != k1.Primary() || len(k1.IDs()) != 1 {
		t.Fatalf("rotation: k1 %v k2 %v", k1.IDs(), k2.IDs())
	}
	s2, _ := k2.Seal([]byte("new"), aad)
	if s2.KeyID != k2.Primary() {
		t.Fatal("not sealed under the new primary")
	}
	for _, c := range []struct {
		s    Sealed
		want string
	}{{s1, "hunter2"}, {s2, "new"}} {
		got, err := k2.Open(c.s, aad)
		if err != nil || string(got) != c.want {
			t.Fatalf("open %s: %q %v", c.s.KeyID, got, err)
		}
	}
}

func TestOpenRefusals(t *testing.T) {
	k, _ := Generate()
	aad := []byte("c/a")
	s, _ := k.Seal([]byte("secret"), aad)

	flip := func(b []byte, i int) []byte { c := bytes.Clone(b); c[i] ^= 1; return c }
	cases := map[string]Sealed{
		"ciphertext bit flipped": {KeyID: s.KeyID, Nonce: s.Nonce, Ciphertext: flip(s.Ciphertext, 0)},
		"tag bit flipped":        {KeyID: s.KeyID, Nonce: s.Nonce, Ciphertext: flip(s.Ciphertext, len(s.Ciphertext)-1)},
		"nonce bit flipped":      {KeyID: s.KeyID, Nonce: flip(s.Nonce, 3), Ciphertext: s.Ciphertext},
		"truncated":              {KeyID: s.KeyID, Nonce: s.Nonce, Ciphertext: s.Ciphertext[:len(s.Ciphertext)-1]},
		"short nonce":            {KeyID: s.KeyID, Nonce: s.Nonce[:8], Ciphertext: s.Ciphertext},
	}
	for name, bad := range cases {
		if _, err := k.Open(bad, aad); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: want ErrOpen, got %v", name, err)
		}
	}
	// Moved to another name (other additional data).
	if _, err := k.Open(s, []byte("c/b")); !errors.Is(err, ErrOpen) {
		t.Errorf("moved: want ErrOpen, got %v", err)
	}
	// A different key that happens to carry the same ID.
	other, _ := Parse([]byte(s.KeyID + " " + strings.Repeat("A", 43) + "=\n"))
	if _, err := other.Open(s, aad); !errors.Is(err, ErrOpen) {
		t.Errorf("wrong key with the same ID: want ErrOpen, got %v", err)
	}
	// Unknown key ID: the error names it and what the keyring has.
	s.KeyID = "k-gone"
	_, err := k.Open(s, aad)
	var uk *UnknownKeyError
	if !errors.As(err, &uk) || uk.ID != "k-gone" || !strings.Contains(err.Error(), "k-gone") || !strings.Contains(err.Error(), k.Primary()) {
		t.Errorf("unknown key: %v", err)
	}
	// No keyring at all.
	var none *Keyring
	if _, err := none.Seal([]byte("x"), nil); !errors.Is(err, ErrNoKeys) {
		t.Errorf("seal without keys: %v", err)
	}
	if _, err := none.Open(s, aad); !errors.As(err, &uk) || !strings.Contains(err.Error(), "no secrets key") {
		t.Errorf("open without keys: %v", err)
	}
}

func TestKeyFileRoundTripAndParseErrors(t *testing.T) {
	k, _ := Generate()
	k, _ = k.WithNewKey()
	b := k.Marshal()
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.IDs(), ",") != strings.Join(k.IDs(), ",") || got.Primary() != k.Primary() {
		t.Fatalf("ids %v vs %v", got.IDs(), k.IDs())
	}
	s, _ := k.Seal([]byte("pw"), nil)
	if p, err := got.Open(s, nil); err != nil || string(p) != "pw" {
		t.Fatalf("parsed keyring cannot open: %v", err)
	}
	key := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" // 32 zero bytes
	bad := map[string]string{
		"empty":      "# only a comment\n\n",
		"one field":  "k1\n",
		"not base64": "k1 !!!!\n",
		"short key":  "k1 AAAA\n",
		"bad id":     "k/1 " + key + "\n",
		"duplicate":  "k1 " + key + "\nk1 " + key + "\n",
		"swapped":    key + " k1\n",
	}
	for name, text := range bad {
		_, err := Parse([]byte(text))
		if !errors.Is(err, ErrKeyFile) {
			t.Errorf("%s: want ErrKeyFile, got %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), key) {
			t.Errorf("%s: the error quotes key material: %v", name, err)
		}
	}
	// The last line is primary.
	two, err := Parse([]byte("a " + key + "\n# c\nb " + strings.Replace(key, "A", "B", 1) + "\n"))
	if err != nil || two.Primary() != "b" {
		t.Fatalf("primary: %v %v", two.IDs(), err)
	}
}

func TestSaveLoadModes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secrets.key")
	k, _ := Generate()
	if err := k.Save(p); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	got, err := Load(p)
	if err != nil || got.Primary() != k.Primary() {
		t.Fatalf("load: %v", err)
	}
	// Save over an existing file keeps 0600 and leaves no temp file.
	k2, _ := k.WithNewKey()
	if err := k2.Save(p); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("dir holds %d entries after save", len(ents))
	}
	// A replaced file keeps its owner (root rotating a service's key).
	if os.Geteuid() == 0 {
		if err := os.Chown(p, 4321, 4321); err != nil {
			t.Fatal(err)
		}
		k3, _ := k2.WithNewKey()
		if err := k3.Save(p); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(p)
		if sys := st.Sys().(*syscall.Stat_t); sys.Uid != 4321 || sys.Gid != 4321 {
			t.Fatalf("owner after save: %d:%d", sys.Uid, sys.Gid)
		}
	} else {
		t.Log("not root: owner preservation not checked")
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key file must be refused: %v", err)
	}
}

func TestHolder(t *testing.T) {
	var h *Holder
	if h.Get() != nil {
		t.Fatal("nil holder")
	}
	h = &Holder{}
	k, _ := Generate()
	h.Set(k)
	if h.Get() != k {
		t.Fatal("set/get")
	}
}
