package coordinator

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/hashicorp/raft"
)

// A backup file (GET /v1/cluster/snapshot, rackfencectl cluster snapshot
// save) is:
//
//	rackfence-backup 1\n
//	BackupHeader as one JSON line\n
//	the FSM snapshot body (snapshot.go), BodyBytes long, SHA-256 BodySHA256
//
// The body is a Raft snapshot the leader took for it, byte for byte, so
// sealed secrets stay sealed: restoring needs the secrets key file.
const (
	backupMagic   = "rackfence-backup"
	backupVersion = 1
)

// BackupHeader describes a backup file.
type BackupHeader struct {
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

// Backup takes a Raft snapshot on this member (the leader: the API
// forwards to it) and writes it to w as a backup file.
func (s *Store) Backup(w io.Writer, tier string) (BackupHeader, error) {
	if !s.IsLeader() {
		return BackupHeader{}, ErrNotLeader
	}
	if err := s.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return BackupHeader{}, fmt.Errorf("snapshot for the backup: %w", mapRaftErr(err))
	}
	list, err := s.snaps.List()
	if err != nil || len(list) == 0 {
		return BackupHeader{}, fmt.Errorf("snapshot for the backup: none in %s: %v", s.snaps.dir, err)
	}
	id := list[0].ID
	// First pass: checksum and counts, so the header can lead the file.
	meta, rc, err := s.snaps.Open(id)
	if err != nil {
		return BackupHeader{}, fmt.Errorf("open snapshot %s: %w", id, err)
	}
	h := sha256.New()
	n, sm, err := scanBody(io.TeeReader(rc, h))
	rc.Close()
	if err != nil {
		return BackupHeader{}, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	hdr := BackupHeader{Format: backupVersion, ClusterID: sm.ClusterID, Tier: tier, NodeID: s.cfg.NodeID,
		Index: meta.Index, Term: meta.Term, Generation: sm.Generation, CreatedAt: time.Now().UTC(),
		Hosts: sm.HostCount, Racks: len(sm.Racks), Credentials: len(sm.Creds), Tokens: len(sm.Tokens),
		SecretsKeyIDs: sealedKeyIDs(sm.Creds), BodyBytes: n, BodySHA256: hex.EncodeToString(h.Sum(nil))}
	_, rc, err = s.snaps.Open(id)
	if err != nil {
		return BackupHeader{}, fmt.Errorf("open snapshot %s: %w", id, err)
	}
	defer rc.Close()
	if err := writeBackupHeader(w, hdr); err != nil {
		return hdr, err
	}
	if c, err := io.Copy(w, rc); err != nil {
		return hdr, fmt.Errorf("send snapshot %s: %w", id, err)
	} else if c != n {
		return hdr, fmt.Errorf("snapshot %s changed while it was sent (%d bytes, then %d)", id, n, c)
	}
	s.log.Info("backup written", "index", hdr.Index, "term", hdr.Term, "hosts", hdr.Hosts, "bytes", n, "sha256", hdr.BodySHA256)
	return hdr, nil
}

// scanBody reads a whole snapshot body: its size and its meta record.
func scanBody(r io.Reader) (int64, snapMeta, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 256<<10)
	var meta snapMeta
	line, err := br.ReadString('\n')
	if err != nil {
		return 0, meta, fmt.Errorf("snapshot header: %w", err)
	}
	var name string
	var ver int
	if _, err := fmt.Sscanf(line, "%s %d\n", &name, &ver); err != nil || name != snapHeader {
		return 0, meta, fmt.Errorf("snapshot header %q is not %q", line, snapHeader)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return 0, meta, fmt.Errorf("snapshot body: %w", err)
	}
	if err := json.NewDecoder(zr).Decode(&meta); err != nil {
		return 0, meta, fmt.Errorf("snapshot meta: %w", err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return 0, meta, err
	}
	return cr.n, meta, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func sealedKeyIDs(creds map[string]credRec) []string {
	seen := map[string]bool{}
	ids := []string{}
	for _, c := range creds {
		if c.Sealed != nil && !seen[c.Sealed.KeyID] {
			seen[c.Sealed.KeyID] = true
			ids = append(ids, c.Sealed.KeyID)
		}
	}
	sort.Strings(ids)
	return ids
}

func writeBackupHeader(w io.Writer, hdr BackupHeader) error {
	b, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s %d\n%s\n", backupMagic, backupVersion, b)
	return err
}

// ReadBackupHeader reads a backup file's two header lines from r, leaving
// r at the start of the body.
func ReadBackupHeader(r *bufio.Reader) (BackupHeader, error) {
	var hdr BackupHeader
	line, err := r.ReadString('\n')
	if err != nil {
		return hdr, fmt.Errorf("%w: no header line (%v)", ErrNotBackup, err)
	}
	var name string
	var ver int
	if _, err := fmt.Sscanf(line, "%s %d\n", &name, &ver); err != nil || name != backupMagic {
		return hdr, fmt.Errorf("%w: it starts with %.40q", ErrNotBackup, line)
	}
	if ver != backupVersion {
		return hdr, fmt.Errorf("%w: backup format %d (this binary reads %d)", ErrSnapshotVersion, ver, backupVersion)
	}
	line, err = r.ReadString('\n')
	if err != nil {
		return hdr, fmt.Errorf("%w: truncated header (%v)", ErrNotBackup, err)
	}
	if err := json.Unmarshal([]byte(line), &hdr); err != nil {
		return hdr, fmt.Errorf("%w: header: %v", ErrNotBackup, err)
	}
	return hdr, nil
}

// checkBody reads the rest of r (a backup body) through fn and checks its
// size and checksum against hdr. fn may stop early; the rest is drained.
func checkBody(r io.Reader, hdr BackupHeader, fn func(io.Reader) error) error {
	h := sha256.New()
	cr := &countingReader{r: io.TeeReader(r, h)}
	if fn != nil {
		if err := fn(cr); err != nil {
			if cr.n < hdr.BodyBytes {
				// A truncated or corrupt body often fails to decode first:
				// name the checksum problem if there is one.
				_, _ = io.Copy(io.Discard, cr)
				if sum := hex.EncodeToString(h.Sum(nil)); cr.n != hdr.BodyBytes || sum != hdr.BodySHA256 {
					return fmt.Errorf("%w: %d bytes, SHA-256 %s; the header says %d bytes, %s", ErrBackupChecksum, cr.n, sum, hdr.BodyBytes, hdr.BodySHA256)
				}
			}
			return err
		}
	}
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); cr.n != hdr.BodyBytes || sum != hdr.BodySHA256 {
		return fmt.Errorf("%w: %d bytes, SHA-256 %s; the header says %d bytes, %s", ErrBackupChecksum, cr.n, sum, hdr.BodyBytes, hdr.BodySHA256)
	}
	return nil
}

// VerifyBackup reads a backup file from r and checks its checksum.
func VerifyBackup(r io.Reader) (BackupHeader, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	hdr, err := ReadBackupHeader(br)
	if err != nil {
		return hdr, err
	}
	return hdr, checkBody(br, hdr, nil)
}
