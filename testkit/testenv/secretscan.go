package testenv

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SecretForms are the encodings FindSecret looks for: the bytes as they
// are, standard and URL base64 (with and without padding, and at the three
// byte alignments a secret can have inside a longer base64 text) and hex
// in both cases.
func SecretForms(secret []byte) map[string][]byte {
	forms := map[string][]byte{"raw": secret}
	for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.URLEncoding} {
		for shift := 0; shift < 3; shift++ {
			// Prefix shift bytes so the secret starts at each alignment,
			// then keep only the characters that depend on the secret alone.
			buf := append(bytes.Repeat([]byte{0}, shift), secret...)
			s := enc.WithPadding(base64.NoPadding).EncodeToString(buf)
			skip := (shift*8 + 5) / 6            // characters touched by the prefix
			end := 8 * (shift + len(secret)) / 6 // characters not touched by what follows
			if end > len(s) {
				end = len(s)
			}
			if end-skip >= 8 {
				forms[fmt.Sprintf("%s@%d", name, shift)] = []byte(s[skip:end])
			}
		}
	}
	forms["hex"] = []byte(hex.EncodeToString(secret))
	forms["HEX"] = []byte(strings.ToUpper(hex.EncodeToString(secret)))
	return forms
}

// SecretHit is one place FindSecret found a secret.
type SecretHit struct {
	File string // path, plus "(gzip at N)" when inside a gzip stream
	Form string // which of SecretForms
	At   int    // byte offset
}

func (h SecretHit) String() string { return fmt.Sprintf("%s: %s at byte %d", h.File, h.Form, h.At) }

// FindSecret scans every byte of every regular file under dir for secret in
// each of SecretForms, and also inside every gzip stream a file holds
// (raft snapshots are gzip'd after a header line), and returns the hits and
// how many bytes it read (compressed and decompressed).
func FindSecret(dir string, secret []byte) (hits []SecretHit, scanned int64, err error) {
	forms := SecretForms(secret)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h, n := scanBytes(p, b, forms)
		hits = append(hits, h...)
		scanned += n
		return nil
	})
	return hits, scanned, err
}

// FindSecretIn scans text (a process log, say) like FindSecret scans a file.
func FindSecretIn(name string, text []byte, secret []byte) []SecretHit {
	h, _ := scanBytes(name, text, SecretForms(secret))
	return h
}

func scanBytes(name string, b []byte, forms map[string][]byte) ([]SecretHit, int64) {
	var hits []SecretHit
	scanned := int64(len(b))
	for form, needle := range forms {
		for off := 0; ; {
			i := bytes.Index(b[off:], needle)
			if i < 0 {
				break
			}
			hits = append(hits, SecretHit{File: name, Form: form, At: off + i})
			off += i + 1
		}
	}
	// Every gzip member header (1f 8b 08) starts a stream to inflate.
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte{0x1f, 0x8b, 0x08})
		if i < 0 {
			break
		}
		at := off + i
		off = at + 1
		zr, err := gzip.NewReader(bytes.NewReader(b[at:]))
		if err != nil {
			continue
		}
		zr.Multistream(false)
		plain, _ := io.ReadAll(io.LimitReader(zr, 1<<30)) // a truncated stream still yields its prefix
		if len(plain) == 0 {
			continue
		}
		h, n := scanBytes(fmt.Sprintf("%s (gzip at %d)", name, at), plain, forms)
		hits = append(hits, h...)
		scanned += n
	}
	return hits, scanned
}
