package testenv

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestFindSecretSeesEveryForm: the at-rest tests rely on this scanner
// finding a secret however it was stored, so each form must be found.
func TestFindSecretSeesEveryForm(t *testing.T) {
	secret := []byte("Zq7-unique-pw-4411")
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for shift := 0; shift < 3; shift++ {
		pre := bytes.Repeat([]byte("x"), shift+5)
		write("b64-"+string(rune('0'+shift)), []byte(base64.StdEncoding.EncodeToString(append(append(pre, secret...), "tail!"...))))
		write("b64url-"+string(rune('0'+shift)), []byte(base64.URLEncoding.EncodeToString(append(append(pre, secret...), "t"...))))
	}
	write("hex", []byte("zz"+hex.EncodeToString(secret)+"zz"))
	var gz bytes.Buffer
	gz.WriteString("rackfence-snapshot 2\n")
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"creds":{"c":{"password":"` + string(secret) + `"}}}`))
	zw.Close()
	write("snapshot", gz.Bytes())
	write("clean", []byte("nothing to see"))

	hits, scanned, err := FindSecret(dir, secret)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, h := range hits {
		found[filepath.Base(h.File)] = true
	}
	for _, want := range []string{"b64-0", "b64-1", "b64-2", "b64url-0", "b64url-1", "b64url-2", "hex", "snapshot (gzip at 21)"} {
		if !found[want] {
			t.Errorf("missed the secret in %s (hits: %v)", want, hits)
		}
	}
	if found["clean"] || scanned == 0 {
		t.Errorf("clean file flagged or nothing scanned: %v %d", hits, scanned)
	}
}
