package coordinator

import "github.com/prometheus/client_golang/prometheus"

// Backup figures: rackfence_backups_total counts the backups this member
// served, by result; the gauges describe the last one it served whole
// (backup_record.go), 0 when it never served one.

func newBackupCounter() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackfence_backups_total",
		Help: "Backups (GET /v1/cluster/snapshot) this member served as leader, by result: ok (written whole) or failed.",
	}, []string{"result"})
	c.WithLabelValues("ok")
	c.WithLabelValues("failed")
	return c
}

// observeBackup counts one backup served.
func (m *Metrics) observeBackup(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.backups.WithLabelValues("ok").Inc()
	} else {
		m.backups.WithLabelValues("failed").Inc()
	}
}

// registerBackup registers the gauges of the last backup s served.
func registerBackup(reg prometheus.Registerer, s *Store) {
	gauge := func(name, help string, v func(BackupRecord) float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			r, ok := s.LastBackup()
			if !ok {
				return 0
			}
			return v(r)
		}))
	}
	gauge("rackfence_backup_last_success_timestamp_seconds",
		"When the last backup this member served whole was taken (Unix seconds; 0: none). Take the maximum over members: the leader serves backups.",
		func(r BackupRecord) float64 { return float64(r.At.UnixNano()) / 1e9 })
	gauge("rackfence_backup_last_index", "Raft index of the last backup this member served whole (0: none).",
		func(r BackupRecord) float64 { return float64(r.Index) })
	gauge("rackfence_backup_last_bytes", "Size of the snapshot body of the last backup this member served whole (0: none).",
		func(r BackupRecord) float64 { return float64(r.Bytes) })
}
