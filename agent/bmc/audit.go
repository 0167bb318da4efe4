package bmc

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
)

// FileAudit is an Auditor appending one JSON line per AuditRecord to a
// local file (mode 0600). Writes are synchronous and unbuffered, so a record
// is on disk (in the page cache) before Guard.Do returns; a write error is
// logged once per burst and counted, never returned to the guarded call.
type FileAudit struct {
	mu     sync.Mutex
	f      *os.File
	log    *slog.Logger
	errors int
}

// NewFileAudit opens (creating or appending to) path.
func NewFileAudit(path string) (*FileAudit, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log %s: %w; check the directory exists and is writable", path, err)
	}
	return &FileAudit{f: f, log: slog.Default()}, nil
}

// Audit writes r as one line.
func (a *FileAudit) Audit(r AuditRecord) {
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	b = append(b, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return
	}
	if _, err := a.f.Write(b); err != nil {
		a.errors++
		if a.errors == 1 || a.errors%1000 == 0 {
			a.log.Error("cannot write the BMC audit log", "path", a.f.Name(), "err", err, "failures", a.errors)
		}
	}
}

// Errors is the number of records that could not be written.
func (a *FileAudit) Errors() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.errors
}

// Close closes the file; later records are dropped.
func (a *FileAudit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

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
