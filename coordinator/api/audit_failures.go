package api

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// auditFailureEvery is how often a member that cannot write its audit
// trail logs so again while the failures go on.
const auditFailureEvery = time.Minute

// auditFailures counts audit records that could not be written and logs
// them without flooding: the first failure, then at most one line a
// minute with the count since, then one line when a record is written
// again. A full disk fails every request's record, and a line per request
// buried everything else the member logged.
type auditFailures struct {
	log   *slog.Logger
	total prometheus.Counter

	mu       sync.Mutex
	failing  bool
	since    time.Time // the first failure of this run
	loggedAt time.Time // the last line logged about it
	unlogged uint64    // failures since that line
	run      uint64    // failures since the last success
}

func newAuditFailures(log *slog.Logger) *auditFailures {
	return &auditFailures{log: log, total: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rackfence_audit_write_failures_total",
		Help: "Audit records this member could not write to its audit trail (a full or failing disk: the records are lost).",
	})}
}

// failed records one record that could not be written.
func (a *auditFailures) failed(err error, route, actor string) {
	a.total.Inc()
	now := time.Now()
	a.mu.Lock()
	a.run++
	if !a.failing {
		a.failing, a.since, a.loggedAt, a.unlogged = true, now, now, 0
		a.mu.Unlock()
		a.log.Error("could not write the audit trail: records are lost until it can (free space or fix the disk of its file); this is logged again at most once a minute",
			"err", err, "route", route, "actor", actor)
		return
	}
	a.unlogged++
	if now.Sub(a.loggedAt) < auditFailureEvery {
		a.mu.Unlock()
		return
	}
	n, since := a.unlogged, a.since
	a.loggedAt, a.unlogged = now, 0
	a.mu.Unlock()
	a.log.Error("still cannot write the audit trail", "err", err, "lostSinceLastLine", n,
		"failingSince", since.UTC().Format(time.RFC3339))
}

// succeeded records a record written.
func (a *auditFailures) succeeded() {
	a.mu.Lock()
	if !a.failing {
		a.mu.Unlock()
		return
	}
	run, since := a.run, a.since
	a.failing, a.run, a.unlogged = false, 0, 0
	a.mu.Unlock()
	a.log.Info("the audit trail is written again", "lostRecords", run,
		"failedFor", time.Since(since).Round(time.Millisecond).String())
}
