package coordinator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	walmetrics "github.com/hashicorp/raft-wal/metrics"
	"go.etcd.io/bbolt"
)

// Raft log stores (Config.LogStore, --raft-log-store).
const (
	// LogStoreAuto (the default) opens a data dir with the store it was
	// written with and creates a new data dir with LogStoreBolt.
	LogStoreAuto = "auto"
	// LogStoreWAL keeps the Raft log in hashicorp/raft-wal segment files
	// under DATA/wal/: an append is one write and one fsync of the
	// preallocated tail segment. Caveat: raft-wal v0.4.0 (hashicorp/raft-wal
	// issue 31, fixed upstream after that release) marks the tail segment
	// sealed on a tail truncation without writing its index block, so the
	// member cannot read its log after its next restart. Raft truncates a
	// follower's tail whenever a new leader overwrites entries that were
	// never committed, which chaos runs and real clusters both do: openRaftStores
	// then refuses with ErrLogUnreadable instead of Raft panicking, and
	// new data dirs use bolt.
	LogStoreWAL = "wal"
	// LogStoreBolt keeps the Raft log in raft.db beside the stable store
	// (raft-boltdb/v2, the store before 2026-11-23): an append is a bolt
	// transaction, two fdatasyncs (data pages, then the meta page).
	LogStoreBolt = "bolt"
)

// walDirName is the raft-wal directory inside the data dir.
const walDirName = "wal"

// raftStores are the stores one member's Raft runs on: raft.db (bolt) is
// always the stable store (term, vote); the log is in bolt too or in a
// raft-wal directory, never both.
type raftStores struct {
	stable *raftboltdb.BoltStore
	logs   raft.LogStore
	wal    *wal.WAL // nil with LogStoreBolt
	// meta is raft-wal's own bolt file (wal/wal-meta.db), opened here
	// because WAL.Close (v0.4.0) does not close it: a reopen in the same
	// process would block forever on its file lock.
	meta *metadb.BoltMetaDB
}

// openRaftStores opens raft.db and the log store kind asks for, refusing a
// data dir whose log was written by the other kind (ErrLogStoreMismatch):
// opening it would start from an empty log beside a stable store that
// remembers a term and vote, i.e. silently lose every entry not yet in a
// snapshot.
func openRaftStores(dataDir, kind string, logger hclog.Logger) (*raftStores, error) {
	if kind != LogStoreWAL && kind != LogStoreBolt && kind != LogStoreAuto {
		return nil, fmt.Errorf("raft log store (--raft-log-store) %q is unknown: use %q, %q or %q", kind, LogStoreAuto, LogStoreBolt, LogStoreWAL)
	}
	walDir := filepath.Join(dataDir, walDirName)
	walUsed, err := dirHasFiles(walDir)
	if err != nil {
		return nil, err
	}
	if kind == LogStoreAuto {
		kind = LogStoreBolt
		if walUsed {
			kind = LogStoreWAL
		}
	}
	if kind == LogStoreBolt && walUsed {
		return nil, fmt.Errorf("%w: %s holds a raft-wal log but --raft-log-store is %q; start with --raft-log-store %s (the store this data dir was written with), or move the data dir away and re-join this member to switch",
			ErrLogStoreMismatch, walDir, kind, LogStoreWAL)
	}
	// NoFreelistSync: bolt rebuilds its freelist on open instead of writing
	// it at every commit, which halves the pages each log append syncs.
	dbPath := filepath.Join(dataDir, "raft.db")
	bolt, err := openBolt(dbPath, &bbolt.Options{Timeout: 5 * time.Second, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return nil, err
	}
	st := &raftStores{stable: bolt, logs: bolt}
	if kind == LogStoreBolt {
		return st, nil
	}
	last, err := bolt.LastIndex()
	if err != nil {
		bolt.Close()
		return nil, fmt.Errorf("read %s: %w", dbPath, err)
	}
	if last > 0 {
		bolt.Close()
		return nil, fmt.Errorf("%w: %s holds a bolt Raft log (last index %d) but --raft-log-store is %q; start with --raft-log-store %s (the store this data dir was written with), or move the data dir away and re-join this member to switch",
			ErrLogStoreMismatch, dbPath, last, kind, LogStoreBolt)
	}
	if err := os.MkdirAll(walDir, 0o700); err != nil {
		bolt.Close()
		return nil, fmt.Errorf("create %s: %w", walDir, err)
	}
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(walDir, wal.WithLogger(logger.Named("wal")), wal.WithMetaStore(meta),
		wal.WithMetricsCollector(walmetrics.NewGoMetricsCollector([]string{"raft", "wal"}, nil, nil)))
	if err != nil {
		meta.Close()
		bolt.Close()
		return nil, fmt.Errorf("open raft-wal in %s: %w", walDir, err)
	}
	st.wal, st.logs, st.meta = w, w, meta
	if err := checkLogReadable(w, walDir); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// checkLogReadable reads the first and last entries of a raft-wal log, as
// raft.NewRaft does (which panics where this returns ErrLogUnreadable).
func checkLogReadable(w *wal.WAL, walDir string) error {
	first, err := w.FirstIndex()
	if err != nil {
		return fmt.Errorf("read %s: %w", walDir, err)
	}
	last, err := w.LastIndex()
	if err != nil {
		return fmt.Errorf("read %s: %w", walDir, err)
	}
	if last == 0 {
		return nil
	}
	for _, i := range []uint64{first, last} {
		var l raft.Log
		if err := w.GetLog(i, &l); err != nil {
			return fmt.Errorf("%w: entry %d of %s: %v. raft-wal cannot read a segment it sealed when Raft truncated this member's log tail "+
				"(the other members hold every committed entry): remove this member (rackfencectl cluster remove ID), move its data dir aside, "+
				"and join it again with an empty data dir; new data dirs use --raft-log-store bolt, which has no such fault",
				ErrLogUnreadable, i, walDir, err)
		}
	}
	return nil
}

// Close closes the log store and the stable store.
func (s *raftStores) Close() error {
	var err, merr error
	if s.wal != nil {
		err = s.wal.Close()
		merr = s.meta.Close()
	}
	return errors.Join(err, merr, s.stable.Close())
}

func dirHasFiles(dir string) (bool, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", dir, err)
	}
	return len(ents) > 0, nil
}
