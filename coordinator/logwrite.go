package coordinator

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// logWrites remembers whether this member can write its Raft log: the last
// failed append (cleared by the next append that succeeds), when the
// failures began and how many there were. A follower that cannot append
// refuses the leader's entries and falls behind while it keeps answering
// heartbeats, so without this nothing on the member says so; GET
// /v1/health, the metrics and the cluster status read it.
type logWrites struct {
	dataDir string
	log     *slog.Logger

	// changed is signalled when the member starts or stops failing its
	// writes (Store.deferElections reads state() on it).
	changed chan struct{}

	mu      sync.Mutex
	last    error     // the last failed write; nil once an append succeeds
	since   time.Time // the first failure since the last success
	run     uint64    // failures since the last success
	total   uint64    // failures since start
	failing bool
}

func newLogWrites(dataDir string, log *slog.Logger) *logWrites {
	return &logWrites{dataDir: dataDir, log: log, changed: make(chan struct{}, 1)}
}

// failed records a failed write and returns it wrapped in ErrLogWrite,
// naming the data dir and what to do (raft logs it, and a leader hands it
// to the writes it could not append).
func (w *logWrites) failed(op string, err error) error {
	w.mu.Lock()
	first := !w.failing
	if first {
		w.since = time.Now()
	}
	w.failing, w.last = true, err
	w.run++
	w.total++
	w.mu.Unlock()
	werr := fmt.Errorf("%w (%s in %s): %w; %s", ErrLogWrite, op, w.dataDir, err, logWriteHint(w.dataDir, err))
	if first {
		w.signal()
		w.log.Error("cannot write the Raft log: this member falls behind until a write succeeds (as leader it steps down)",
			"dataDir", w.dataDir, "op", op, "err", err, "hint", logWriteHint(w.dataDir, err))
	}
	return werr
}

// succeeded records an append that reached the disk.
func (w *logWrites) succeeded() {
	w.mu.Lock()
	if !w.failing {
		w.mu.Unlock()
		return
	}
	run, since := w.run, w.since
	w.failing, w.last, w.run = false, nil, 0
	w.mu.Unlock()
	w.signal()
	w.log.Info("the Raft log is written again: this member catches up with the leader by itself",
		"dataDir", w.dataDir, "failedWrites", run, "failingFor", time.Since(since).Round(time.Millisecond).String())
}

// signal wakes whoever follows changed, without blocking.
func (w *logWrites) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// problem is why this member cannot write its log, "" while it can.
func (w *logWrites) problem() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.failing {
		return ""
	}
	return fmt.Sprintf("cannot write the Raft log in data dir %s since %s (%d failed writes; last: %v): this member is falling behind the leader; %s",
		w.dataDir, w.since.UTC().Format(time.RFC3339), w.run, w.last, logWriteHint(w.dataDir, w.last))
}

// state returns whether the last write failed and the failures since start.
func (w *logWrites) state() (failing bool, total uint64) {
	if w == nil {
		return false, 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failing, w.total
}

func logWriteHint(dir string, err error) string {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Sprintf("the file system of %s is full: free space there (df -h %s); replication resumes by itself once a write succeeds, no restart needed", dir, dir)
	}
	return fmt.Sprintf("check the disk of %s (dmesg, df -h %s, permissions); replication resumes by itself once a write succeeds", dir, dir)
}

// watchedLogs is the Raft log store reporting each write's outcome to
// logWrites. Reads pass through.
type watchedLogs struct {
	raft.LogStore
	w *logWrites
}

// StoreLog stores one entry.
func (l watchedLogs) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

// StoreLogs appends entries; a success clears a recorded failure.
func (l watchedLogs) StoreLogs(logs []*raft.Log) error {
	if err := l.LogStore.StoreLogs(logs); err != nil {
		return l.w.failed("append", err)
	}
	l.w.succeeded()
	return nil
}

// DeleteRange deletes entries. A failure is recorded; a success does not
// clear one (deleting may succeed where appending cannot).
func (l watchedLogs) DeleteRange(min, max uint64) error {
	if err := l.LogStore.DeleteRange(min, max); err != nil {
		return l.w.failed("delete", err)
	}
	return nil
}
