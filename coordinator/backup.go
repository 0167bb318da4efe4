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

	"github.com/rackfence/rackfence/shared/backupfile"
)

// BackupHeader describes a backup file (package backupfile).
type BackupHeader = backupfile.Header

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
	hdr := BackupHeader{ClusterID: sm.ClusterID, Tier: tier, NodeID: s.cfg.NodeID,
		Index: meta.Index, Term: meta.Term, Generation: sm.Generation, CreatedAt: time.Now().UTC(),
		Hosts: sm.HostCount, Racks: len(sm.Racks), Credentials: len(sm.Creds), Tokens: len(sm.Tokens),
		SecretsKeyIDs: sealedKeyIDs(sm.Creds), BodyBytes: n, BodySHA256: hex.EncodeToString(h.Sum(nil))}
	_, rc, err = s.snaps.Open(id)
	if err != nil {
		return BackupHeader{}, fmt.Errorf("open snapshot %s: %w", id, err)
	}
	defer rc.Close()
	if err := backupfile.Write(w, hdr); err != nil {
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
	cr := &backupfile.CountingReader{R: r}
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
	return cr.N, meta, nil
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
