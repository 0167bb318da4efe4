package coordinator

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// BackupRecordFile is the file in the data dir where a member keeps the
// last backup it served (BackupRecord), so the figure survives a restart.
const BackupRecordFile = "last-backup.json"

// BackupRecord is the last backup this member served: what the metrics
// rackfence_backup_last_* show and the alert RackfenceBackupStale reads.
//
// Caveat: it is this member's own record, not replicated. Backups are
// served by the leader, so after a change of leader the newest record is
// on the old leader; the alert takes the maximum over members. A member
// that never served a backup shows 0. A replicated record would need a new
// command type, and a backup is an operator's off-site copy: the members
// themselves cannot tell whether it reached safe storage.
type BackupRecord struct {
	At     time.Time `json:"at"`
	Index  uint64    `json:"index"`
	Term   uint64    `json:"term"`
	Hosts  int       `json:"hosts"`
	Bytes  int64     `json:"bytes"`
	SHA256 string    `json:"sha256"`
}

// LastBackup is the last backup this member served (ok false: none).
func (s *Store) LastBackup() (BackupRecord, bool) {
	if r := s.lastBackup.Load(); r != nil {
		return *r, true
	}
	return BackupRecord{}, false
}

// loadBackupRecord reads the data dir's record; a missing file is no
// record, a damaged one is logged and ignored (the next backup rewrites it).
func (s *Store) loadBackupRecord() {
	p := filepath.Join(s.cfg.DataDir, BackupRecordFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var r BackupRecord
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		s.log.Warn("the record of the last backup is unreadable; it is rewritten by the next backup", "file", p, "err", err)
		return
	}
	s.lastBackup.Store(&r)
}

// recordBackup keeps hdr as the last backup served: in memory for the
// metrics and in the data dir (written to a temporary file, synced, then
// renamed, so a crash leaves the old record or the new one).
func (s *Store) recordBackup(hdr BackupHeader) error {
	r := &BackupRecord{At: hdr.CreatedAt, Index: hdr.Index, Term: hdr.Term, Hosts: hdr.Hosts,
		Bytes: hdr.BodyBytes, SHA256: hdr.BodySHA256}
	s.lastBackup.Store(r)
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	p := filepath.Join(s.cfg.DataDir, BackupRecordFile)
	tmp := p + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("record the backup: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("record the backup in %s: %w", p, err)
	}
	return nil
}
