package coordinator

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/backupfile"
)

// BackupHeader describes a backup file (package backupfile).
type BackupHeader = backupfile.Header

// Backup takes a Raft snapshot on this member (the leader: the API
// forwards to it) and writes it to w as a backup file.
//
// A backup written whole is recorded (backup_record.go) and counted in
// rackfence_backups_total; one that failed after this member took it on is
// counted as failed.
func (s *Store) Backup(w io.Writer, tier string) (BackupHeader, error) {
	if !s.IsLeader() {
		return BackupHeader{}, ErrNotLeader
	}
	hdr, err := s.backup(w, tier)
	s.cfg.Metrics.observeBackup(err == nil)
	if err != nil {
		return hdr, err
	}
	if err := s.recordBackup(hdr); err != nil {
		// The backup itself is whole: only the metric's record is lost.
		s.log.Warn("backup written but not recorded: rackfence_backup_last_success_timestamp_seconds stays at the previous backup", "err", err)
	}
	return hdr, nil
}

func (s *Store) backup(w io.Writer, tier string) (BackupHeader, error) {
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
	cr := &backupfile.CountingReader{R: io.TeeReader(rc, h)}
	sm, err := fsm.ScanSnapshot(cr)
	rc.Close()
	n := cr.N
	if err != nil {
		return BackupHeader{}, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	hdr := BackupHeader{ClusterID: sm.ClusterID, Tier: tier, NodeID: s.cfg.NodeID,
		Index: meta.Index, Term: meta.Term, Generation: sm.Generation, CreatedAt: time.Now().UTC(),
		Hosts: sm.Hosts, Racks: sm.Racks, Credentials: sm.Credentials, Tokens: sm.Tokens,
		SecretsKeyIDs: sm.SecretsKeyIDs, BodyBytes: n, BodySHA256: hex.EncodeToString(h.Sum(nil))}
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
