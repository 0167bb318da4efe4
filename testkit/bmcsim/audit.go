package bmcsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/internal/jsonl"
)

// AuditLine is one line of the audit file (what the request was, plus status).
type AuditLine struct {
	Time      string `json:"time"` // RFC 3339 with nanoseconds, arrival
	Port      int    `json:"port"`
	Remote    string `json:"remote"`
	UserAgent string `json:"userAgent"`
	// User is the account the request was authenticated as ("" when it
	// was refused 401: no valid credentials or session).
	User   string `json:"user,omitempty"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   string `json:"body"`   // compact JSON, at most 512 bytes
	Status int    `json:"status"` // what the BMC answered
	// Task is the task this request started (202 Accepted), e.g. a
	// SimpleUpdate's; UpdateRunning the firmware update task that was
	// running when the request arrived (a power change during a flash).
	Task          string `json:"task,omitempty"`
	UpdateRunning string `json:"updateRunning,omitempty"`
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

func (s *Sim) auditCall(b *bmc, r *http.Request, arrived time.Time, body []byte, rec *statusWriter) {
	if s.audit == nil {
		return
	}
	if isAccountPath(r.URL.Path) {
		body = redactPasswords(body)
	}
	if isEventPath(r.URL.Path) {
		body = redactHeaders(body)
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		body = []byte("(multipart, " + strconv.Itoa(len(body)) + " bytes)")
	}
	_ = s.audit.Append(AuditLine{ // a write error is dropped: the sim answers regardless
		Time: arrived.UTC().Format(time.RFC3339Nano), Port: b.port, Remote: r.RemoteAddr,
		UserAgent: r.UserAgent(), User: rec.user, Method: r.Method, Path: r.URL.Path, Body: summarize(body), Status: rec.code(),
		Task: rec.task, UpdateRunning: rec.during,
	})
}

// ReadAudit reads an audit file of mutating calls, oldest first. A file
// not yet created (no mutating call so far) reads as empty, and a last line
// still being written is left out; any other bad line is an error.
func ReadAudit(path string) ([]AuditLine, error) { return jsonl.Read[AuditLine](path) }
