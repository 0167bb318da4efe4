package pki

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
)

// Files of a member's TLS directory (DATA/tls).
const (
	CACertFile     = "ca.crt"
	CAKeyFile      = "ca.key"
	MemberCertFile = "member.crt"
	MemberKeyFile  = "member.key"
)

// WriteFile writes data to path atomically with mode 0600 (dir 0700).
func WriteFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func hexSum(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}
