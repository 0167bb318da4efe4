package backupfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func file(t *testing.T, body string) []byte {
	t.Helper()
	sum := sha256.Sum256([]byte(body))
	var b bytes.Buffer
	if err := Write(&b, Header{ClusterID: "c1", Index: 7, BodyBytes: int64(len(body)), BodySHA256: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
	b.WriteString(body)
	return b.Bytes()
}

func TestVerify(t *testing.T) {
	good := file(t, "rackfence-snapshot 2\npayload")
	h, err := Verify(bytes.NewReader(good))
	if err != nil || h.ClusterID != "c1" || h.Index != 7 || h.Format != Version {
		t.Fatalf("intact file: %+v %v", h, err)
	}
	for name, b := range map[string][]byte{
		"flipped byte": bytes.Replace(good, []byte("payload"), []byte("paYload"), 1),
		"truncated":    good[:len(good)-3],
		"appended":     append(bytes.Clone(good), 'x'),
	} {
		if _, err := Verify(bytes.NewReader(b)); !errors.Is(err, ErrChecksum) {
			t.Errorf("%s: %v, want ErrChecksum", name, err)
		}
	}
	if _, err := Verify(strings.NewReader("rackfence-snapshot 2\n...")); !errors.Is(err, ErrNotBackup) {
		t.Errorf("a raw snapshot: %v, want ErrNotBackup", err)
	}
	if _, err := Verify(bytes.NewReader(bytes.Replace(good, []byte("rackfence-backup 1"), []byte("rackfence-backup 9"), 1))); !errors.Is(err, ErrVersion) {
		t.Errorf("format 9: %v, want ErrVersion", err)
	}
}
