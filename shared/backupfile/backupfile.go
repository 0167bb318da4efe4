// Package backupfile reads and writes the header of a rackfence backup
// file (rackfencectl cluster snapshot save):
//
//	rackfence-backup 1\n
//	Header as one JSON line\n
//	the coordinator's FSM snapshot body, BodyBytes long, SHA-256 BodySHA256
//
// The body is a Raft snapshot the leader took for it, byte for byte, so
// sealed secrets stay sealed: restoring needs the secrets key file. This
// package has no Raft dependency, so the CLI can check a file offline.
package backupfile

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

const (
	magic = "rackfence-backup"
	// Version is the format version written now.
	Version = 1
)

// Errors of reading a backup file.
var (
	// ErrNotBackup means a file is not a rackfence backup.
	ErrNotBackup = errors.New("not a rackfence backup file (rackfencectl cluster snapshot save writes them)")
	// ErrVersion means the file was written by a newer format.
	ErrVersion = errors.New("backup format unknown to this binary; use the binary of the release that wrote it or newer")
	// ErrChecksum means a backup's body does not match its header.
	ErrChecksum = errors.New("the backup is truncated or corrupt: its body does not match the checksum in its header; use another backup")
)

// Header describes a backup file.
type Header struct {
	Format     int       `json:"format"`
	ClusterID  string    `json:"clusterID"`
	Tier       string    `json:"tier"`
	NodeID     string    `json:"nodeID"`
	Index      uint64    `json:"index"`
	Term       uint64    `json:"term"`
	Generation uint64    `json:"generation"`
	CreatedAt  time.Time `json:"createdAt"`
	// Hosts, Racks, Credentials and Tokens count the records inside.
	Hosts       int `json:"hosts"`
	Racks       int `json:"racks"`
	Credentials int `json:"credentials"`
	Tokens      int `json:"tokens"`
	// SecretsKeyIDs are the secrets keys the sealed records need.
	SecretsKeyIDs []string `json:"secretsKeyIDs"`
	BodyBytes     int64    `json:"bodyBytes"`
	BodySHA256    string   `json:"bodySHA256"`
}

// Write writes the two header lines.
func Write(w io.Writer, h Header) error {
	h.Format = Version
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s %d\n%s\n", magic, Version, b)
	return err
}

// Read reads the two header lines from r, leaving r at the body.
func Read(r *bufio.Reader) (Header, error) {
	var h Header
	line, err := r.ReadString('\n')
	if err != nil {
		return h, fmt.Errorf("%w: no header line (%v)", ErrNotBackup, err)
	}
	var name string
	var ver int
	if _, err := fmt.Sscanf(line, "%s %d\n", &name, &ver); err != nil || name != magic {
		return h, fmt.Errorf("%w: it starts with %.40q", ErrNotBackup, line)
	}
	if ver != Version {
		return h, fmt.Errorf("%w: format %d (this binary reads %d)", ErrVersion, ver, Version)
	}
	line, err = r.ReadString('\n')
	if err != nil {
		return h, fmt.Errorf("%w: truncated header (%v)", ErrNotBackup, err)
	}
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		return h, fmt.Errorf("%w: header: %v", ErrNotBackup, err)
	}
	return h, nil
}

// CheckBody reads the rest of r (the body) through fn (nil: just read)
// and checks its size and checksum against h. When fn fails on a body
// that does not match, the checksum error is returned.
func CheckBody(r io.Reader, h Header, fn func(io.Reader) error) error {
	sum := sha256.New()
	cr := &CountingReader{R: io.TeeReader(r, sum)}
	var fnErr error
	if fn != nil {
		fnErr = fn(cr)
	}
	if _, err := io.Copy(io.Discard, cr); err != nil && fnErr == nil {
		return err
	}
	if got := hex.EncodeToString(sum.Sum(nil)); cr.N != h.BodyBytes || got != h.BodySHA256 {
		return fmt.Errorf("%w: %d bytes, SHA-256 %s; the header says %d bytes, %s", ErrChecksum, cr.N, got, h.BodyBytes, h.BodySHA256)
	}
	return fnErr
}

// Verify reads a whole backup file and checks its checksum.
func Verify(r io.Reader) (Header, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	h, err := Read(br)
	if err != nil {
		return h, err
	}
	return h, CheckBody(br, h, nil)
}

// CountingReader counts the bytes read through it.
type CountingReader struct {
	R io.Reader
	N int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
