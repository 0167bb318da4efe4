package guard

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/rackfence/rackfence/internal/jsonl"
)

// FileAudit is an Auditor appending one JSON line per AuditRecord to a
// local file (mode 0600, through internal/jsonl). Writes are synchronous and
// unbuffered, so a record is on disk (in the page cache) before Guard.Do
// returns; a write error is logged once per burst and counted, never
// returned to the guarded call. The file is not rotated.
type FileAudit struct {
	w   *jsonl.Writer
	log *slog.Logger

	mu     sync.Mutex
	errors int
}

// NewFileAudit opens (creating or appending to) path.
func NewFileAudit(path string) (*FileAudit, error) {
	w, err := jsonl.Open(path, jsonl.Options{})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &FileAudit{w: w, log: slog.Default()}, nil
}

// Audit writes r as one line. After Close records are dropped silently.
func (a *FileAudit) Audit(r AuditRecord) {
	err := a.w.Append(r)
	if err == nil || errors.Is(err, jsonl.ErrClosed) {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.errors++
	if a.errors == 1 || a.errors%1000 == 0 {
		a.log.Error("cannot write the guard's audit log", "path", a.w.Path(), "err", err, "failures", a.errors)
	}
}

// Close closes the file; later records are dropped.
func (a *FileAudit) Close() error { return a.w.Close() }

// MemoryAudit keeps records in memory (tests, and the agent's recent-calls
// view). Safe for concurrent use.
type MemoryAudit struct {
	mu      sync.Mutex
	records []AuditRecord
}

// Audit appends r.
func (m *MemoryAudit) Audit(r AuditRecord) {
	m.mu.Lock()
	m.records = append(m.records, r)
	m.mu.Unlock()
}

// Records returns a copy of what was recorded.
func (m *MemoryAudit) Records() []AuditRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]AuditRecord(nil), m.records...)
}

// MultiAudit sends each record to every Auditor.
type MultiAudit []Auditor

// Audit fans r out.
func (m MultiAudit) Audit(r AuditRecord) {
	for _, a := range m {
		a.Audit(r)
	}
}
