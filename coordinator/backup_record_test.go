package coordinator_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/testkit/coordtest"
)

// backupFigures are the last-backup gauges and the ok counter in reg.
func backupFigures(t *testing.T, reg *prometheus.Registry) (at, index, bytes, ok float64) {
	t.Helper()
	return metric(t, reg, "rackfence_backup_last_success_timestamp_seconds", ""), metric(t, reg, "rackfence_backup_last_index", ""),
		metric(t, reg, "rackfence_backup_last_bytes", ""), metric(t, reg, "rackfence_backups_total", "ok")
}

// TestBackupRecorded: a backup served whole is the member's last backup
// (metrics, data dir file, owner-only), and it survives a restart.
func TestBackupRecorded(t *testing.T) {
	m := coordtest.Start(t, coordtest.Options{ID: "bk-1", NoCredentials: true})
	if _, ok := m.Store.LastBackup(); ok {
		t.Fatal("a new member has a last backup")
	}
	if at, index, bytes, ok := backupFigures(t, m.Registry); at != 0 || index != 0 || bytes != 0 || ok != 0 {
		t.Fatalf("before any backup: last backup at %v, index %v, %v bytes; %v backups", at, index, bytes, ok)
	}
	admin := m.Admin
	for i := range 3 {
		if _, _, err := admin.ApplyHost(ctx(t), host(fmt.Sprintf("h%d", i), "r1")); err != nil {
			t.Fatal(err)
		}
	}
	_, hdr := saveBackup(t, admin)
	got, ok := m.Store.LastBackup()
	want := coordinator.BackupRecord{At: hdr.CreatedAt, Index: hdr.Index, Term: hdr.Term, Hosts: hdr.Hosts, Bytes: hdr.BodyBytes, SHA256: hdr.BodySHA256}
	if !ok || !got.At.Equal(want.At) || got.Index != want.Index || got.Hosts != 3 || got.Bytes != want.Bytes || got.SHA256 != want.SHA256 {
		t.Fatalf("last backup %+v (ok %v), want %+v", got, ok, want)
	}
	wantAt := float64(got.At.UnixNano()) / 1e9
	if at, index, bytes, ok := backupFigures(t, m.Registry); at != wantAt || index != float64(got.Index) || bytes != float64(got.Bytes) || ok != 1 {
		t.Fatalf("after a backup: last backup at %v, index %v, %v bytes; %v backups; want %v, %d, %d; 1", at, index, bytes, ok, wantAt, got.Index, got.Bytes)
	}
	fi, err := os.Stat(filepath.Join(m.Dir, coordinator.BackupRecordFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", coordinator.BackupRecordFile, fi.Mode().Perm())
	}

	// Restarted on the same data dir, the member still knows it.
	r := m.Restart(coordtest.Options{NoCredentials: true})
	again, ok := r.Store.LastBackup()
	if !ok || !again.At.Equal(got.At) || again.Index != got.Index || again.SHA256 != got.SHA256 {
		t.Fatalf("after a restart: last backup %+v (ok %v), want %+v", again, ok, got)
	}
	if at := metric(t, r.Registry, "rackfence_backup_last_success_timestamp_seconds", ""); at != wantAt {
		t.Fatalf("after a restart: rackfence_backup_last_success_timestamp_seconds %v, want %v", at, wantAt)
	}
}

// metric reads the value of name in reg (a gauge, or the counter whose
// result label is result).
func metric(t *testing.T, reg *prometheus.Registry, name, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if result == "" {
				return m.GetGauge().GetValue()
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no metric %s (result %q)", name, result)
	return 0
}

// portOf is the port of addr (host:port).
func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
