package api

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAuditFailuresLogOncePerMinute: a run of failed audit records logs
// one line, a line a minute after with the count since, and one when a
// record is written again; the counter counts every lost record.
func TestAuditFailuresLogOncePerMinute(t *testing.T) {
	var buf bytes.Buffer
	a := newAuditFailures(slog.New(slog.NewJSONHandler(&buf, nil)))
	full := errors.New("write audit.log: no space left on device")
	for range 500 {
		a.failed(full, "/v1/hosts/:name", "admin")
	}
	if n := strings.Count(buf.String(), "\n"); n != 1 {
		t.Fatalf("500 failures within a minute logged %d lines, want 1:\n%s", n, buf.String())
	}
	a.mu.Lock()
	a.loggedAt = a.loggedAt.Add(-auditFailureEvery) // a minute later
	a.mu.Unlock()
	a.failed(full, "/v1/hosts/:name", "admin")
	if !strings.Contains(buf.String(), `"still cannot write the audit trail"`) || !strings.Contains(buf.String(), `"lostSinceLastLine":500`) {
		t.Fatalf("a minute later: %s", buf.String())
	}
	a.succeeded()
	a.succeeded()
	if !strings.Contains(buf.String(), `"the audit trail is written again"`) || !strings.Contains(buf.String(), `"lostRecords":501`) {
		t.Fatalf("after a record was written: %s", buf.String())
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Fatalf("%d lines in all, want 3:\n%s", n, buf.String())
	}
	if got := testutil.ToFloat64(a.total); got != 501 {
		t.Fatalf("rackfence_audit_write_failures_total = %v, want 501", got)
	}
	a.failed(full, "/v1/racks/:rack/lease", "agent")
	if n := strings.Count(buf.String(), "could not write the audit trail"); n != 2 {
		t.Fatalf("a new run of failures after a success logged %d first lines in all, want 2", n)
	}
}
