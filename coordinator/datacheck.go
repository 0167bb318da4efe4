package coordinator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// Damaged or missing data files. A member whose data dir lost or damaged a
// file must refuse to start, naming the file, rather than crash (bbolt
// faults on a file cut short: it maps the file and reads past its end) or
// start from part of its state (raft panics "log not found" when the log
// was compacted and no snapshot covers the entries removed). Every refusal
// wraps ErrDataDamaged and ends with DataRunbook.

// DataRunbook is what an operator does with a member whose data dir is
// damaged (docs/operator.md, "Damaged or missing data files").
const DataRunbook = "the other members hold every committed entry: remove this member (rackfencectl cluster remove ID), " +
	"move its data dir aside (keep it), and start it again with an empty data dir and --join URL (it receives a snapshot and the log from the leader); " +
	"if no member's data survives, restore the latest backup (rackfence-coordinator restore) into an empty data dir"

// damaged is the refusal for file.
func damaged(file, format string, a ...any) error {
	return fmt.Errorf("%w: %s %s; %s", ErrDataDamaged, file, fmt.Sprintf(format, a...), DataRunbook)
}

// CheckDataDir checks the files of a stopped member's data dir before
// anything opens them: raft.db (and wal/wal-meta.db) must hold a valid bolt
// meta page and be as long as it says, and raft.db must be there when the
// data dir holds other Raft state. A new or empty data dir passes.
func CheckDataDir(dataDir string) error {
	dbPath := filepath.Join(dataDir, "raft.db")
	if _, err := os.Stat(dbPath); errors.Is(err, fs.ErrNotExist) {
		for _, p := range []string{filepath.Join(dataDir, "snapshots"), filepath.Join(dataDir, walDirName), filepath.Join(dataDir, "node-id")} {
			if fileOrEntries(p) {
				return damaged(dbPath, "is missing but the data dir holds %s (Raft state of this member): the term, vote and log are lost", p)
			}
		}
		return nil
	}
	if err := checkBoltFile(dbPath); err != nil {
		return err
	}
	return checkBoltFile(filepath.Join(dataDir, walDirName, "wal-meta.db"))
}

// fileOrEntries reports whether p is a file, or a directory with entries.
func fileOrEntries(p string) bool {
	info, err := os.Stat(p)
	if err != nil {
		return false
	}
	if !info.IsDir() {
		return true
	}
	ents, _ := os.ReadDir(p)
	return len(ents) > 0
}

// openBolt opens raft.db as raft-boltdb does, after checkBoltFile, with a
// memory fault (SIGSEGV/SIGBUS reading the mapped file) or a bbolt panic
// turned into a refusal naming the file; it then reads the first and last
// log entries and the term, as raft.NewRaft will.
func openBolt(path string, o *bbolt.Options) (*raftboltdb.BoltStore, error) {
	if err := checkBoltFile(path); err != nil {
		return nil, err
	}
	var st *raftboltdb.BoltStore
	err := faultGuard(path, func() error {
		var err error
		if st, err = raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: o}); err != nil {
			if errors.Is(err, bbolt.ErrInvalid) || errors.Is(err, bbolt.ErrChecksum) || errors.Is(err, bbolt.ErrVersionMismatch) {
				return damaged(path, "cannot be opened (%v)", err)
			}
			return fmt.Errorf("open %s: %w", path, err)
		}
		if err := probeLog(st); err != nil {
			st.Close()
			return damaged(path, "cannot be read (%v)", err)
		}
		return nil
	})
	return st, err
}

// probeLog reads the first and last entries of logs and the stored term.
func probeLog(st *raftboltdb.BoltStore) error {
	first, err := st.FirstIndex()
	if err != nil {
		return err
	}
	last, err := st.LastIndex()
	if err != nil {
		return err
	}
	if last > 0 {
		for _, i := range []uint64{first, last} {
			var l raft.Log
			if err := st.GetLog(i, &l); err != nil {
				return fmt.Errorf("log entry %d: %w", i, err)
			}
		}
	}
	if _, err := st.GetUint64([]byte("CurrentTerm")); err != nil && !errors.Is(err, raftboltdb.ErrKeyNotFound) {
		return fmt.Errorf("current term: %w", err)
	}
	return nil
}

// faultGuard runs fn with memory faults turned into panics (in this
// goroutine, the one that maps and first reads the file) and any panic into
// a refusal naming file.
func faultGuard(file string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = damaged(file, "faulted while being read (%v): it is damaged or cut short", r)
		}
	}()
	return fn()
}

// checkSnapshots refuses a data dir raft would not start from: snapshots
// are listed but none opens (raft: "failed to load any existing
// snapshots"), or the log was compacted (first index > 1) and no snapshot
// that opens reaches the entry before it (raft panics "log not found").
// It returns the index of the snapshot raft will restore (0: none). Open
// checks each snapshot's CRC, as raft's restore does.
func checkSnapshots(dataDir string, logs raft.LogStore, snaps raft.SnapshotStore) (uint64, error) {
	dir := filepath.Join(dataDir, "snapshots")
	list, err := snaps.List()
	if err != nil {
		return 0, damaged(dir, "cannot be listed (%v)", err)
	}
	var index uint64
	var bad []string
	found := false
	for _, m := range list {
		_, rc, err := snaps.Open(m.ID)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", m.ID, err))
			continue
		}
		rc.Close()
		index, found = m.Index, true
		break
	}
	if !found && len(list) > 0 {
		return 0, damaged(dir, "holds %d snapshot(s) and none opens (%s)", len(list), strings.Join(bad, "; "))
	}
	first, err := logs.FirstIndex()
	if err != nil {
		return 0, fmt.Errorf("read the Raft log's first index: %w", err)
	}
	if first > 1 && index < first-1 {
		what := "no snapshot"
		if found {
			what = fmt.Sprintf("its newest snapshot that opens ends at index %d", index)
		}
		if len(bad) > 0 {
			what += fmt.Sprintf(" (damaged: %s)", strings.Join(bad, "; "))
		}
		return 0, damaged(dir, "is incomplete: the Raft log was compacted and starts at index %d, but %s; entries 1 to %d are in no file here",
			first, what, first-1)
	}
	return index, nil
}
