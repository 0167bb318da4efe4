package bmcsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// AuditLine is one line of the audit file (CONTRACT.md fields plus status).
type AuditLine struct {
	Time      string `json:"time"` // RFC 3339 with nanoseconds, arrival
	Port      int    `json:"port"`
	Remote    string `json:"remote"`
	UserAgent string `json:"userAgent"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Body      string `json:"body"`   // compact JSON, at most 512 bytes
	Status    int    `json:"status"` // what the BMC answered
}

type auditFile struct {
	mu sync.Mutex
	f  *os.File
}

func openAudit(path string) (*auditFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &auditFile{f: f}, nil
}

func (a *auditFile) write(l AuditLine) {
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	b = append(b, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f != nil {
		_, _ = a.f.Write(b) // one write per line: readers never see half a line
	}
}

func (a *auditFile) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// summarize compacts a JSON body (or quotes a non-JSON one), bounded.
func summarize(body []byte) string {
	var buf bytes.Buffer
	s := ""
	if len(bytes.TrimSpace(body)) == 0 {
		s = ""
	} else if err := json.Compact(&buf, body); err == nil {
		s = buf.String()
	} else {
		s = string(body)
	}
	if len(s) > 512 {
		s = s[:509] + "..."
	}
	return s
}

func (s *Sim) auditCall(b *bmc, r *http.Request, arrived time.Time, body []byte, status int) {
	if s.audit == nil {
		return
	}
	s.audit.write(AuditLine{
		Time: arrived.UTC().Format(time.RFC3339Nano), Port: b.port, Remote: r.RemoteAddr,
		UserAgent: r.UserAgent(), Method: r.Method, Path: r.URL.Path, Body: summarize(body), Status: status,
	})
}

// ReadAudit reads an audit file of mutating calls, oldest first. A file
// not yet created (no mutating call so far) reads as empty, and a last line
// still being written is left out; any other bad line is an error.
func ReadAudit(path string) ([]AuditLine, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditLine
	var bad error
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if bad != nil {
			return out, bad
		}
		var l AuditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			bad = fmt.Errorf("audit %s: line %q: %w", path, sc.Text(), err)
			continue
		}
		out = append(out, l)
	}
	return out, sc.Err()
}
