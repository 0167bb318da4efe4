package coordinator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// Data dir permissions: every file the coordinator keeps is readable by
// its owner only (0600, directories 0700). raft's FileSnapshotStore creates
// 0755 directories and 0644 files, so the process runs with umask 0077
// (rackfence-coordinator sets it at start), Open tightens what is already
// there, and every finished snapshot is tightened after raft renames it
// into place (for library users without the umask).

// SecureDataDir sets every file under dir to 0600 and every directory to
// 0700 (symbolic links are left alone); it returns how many it changed.
func SecureDataDir(dir string) (int, error) {
	changed := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if info.Mode().Perm() == want {
			return nil
		}
		if err := os.Chmod(p, want); err != nil {
			return fmt.Errorf("tighten %s to %04o: %w", p, want, err)
		}
		changed++
		return nil
	})
	return changed, err
}

// secureSnapshots wraps raft's file snapshot store: each snapshot's
// directory and files are made owner-only once raft finished it.
type secureSnapshots struct {
	*raft.FileSnapshotStore
	dir string // the store's snapshots/ directory
}

func (s *secureSnapshots) Create(version raft.SnapshotVersion, index, term uint64, conf raft.Configuration,
	confIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.FileSnapshotStore.Create(version, index, term, conf, confIndex, trans)
	if err != nil {
		return nil, err
	}
	return &secureSink{SnapshotSink: sink, dir: s.dir}, nil
}

type secureSink struct {
	raft.SnapshotSink
	dir string
}

func (s *secureSink) Close() error {
	if err := s.SnapshotSink.Close(); err != nil {
		return err
	}
	_, err := SecureDataDir(filepath.Join(s.dir, s.ID()))
	return err
}

// Snapshot takes a Raft snapshot on this member now (POST
// /v1/cluster/snapshot): the log up to it can then be compacted. When
// nothing was applied since the last one it returns that one's index.
func (s *Store) Snapshot() (index uint64, took time.Duration, err error) {
	start := time.Now()
	f := s.raft.Snapshot()
	if err := f.Error(); err != nil {
		if errors.Is(err, raft.ErrNothingNewToSnapshot) {
			idx, _ := strconv.ParseUint(s.raft.Stats()["last_snapshot_index"], 10, 64)
			return idx, time.Since(start), nil
		}
		return 0, time.Since(start), fmt.Errorf("snapshot: %w", mapRaftErr(err))
	}
	meta, rc, err := f.Open()
	if err != nil {
		return 0, time.Since(start), fmt.Errorf("snapshot taken, but reopening it failed: %w", err)
	}
	rc.Close()
	s.log.Info("snapshot taken on request", "index", meta.Index, "took", time.Since(start).String())
	return meta.Index, time.Since(start), nil
}
