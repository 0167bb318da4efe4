package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// damagedHosts is how many hosts the member holds before its data dir is
// damaged: some in the snapshot, some only in the log after it.
const damagedHosts = 40

// A member whose data dir lost or damaged a file refuses to start with
// exit 6, naming the file and the runbook, never a crash (bbolt's fault on
// a cut raft.db, raft's "log not found" panic without snapshots); inspect
// on the same dir exits 6 too and never reports part of the state as if
// it were whole.
func TestDamagedDataDirRefused(t *testing.T) {
	n := newLogStoreNode(t)
	// 8 trailing entries: the snapshot compacts the log, whose first
	// index is then > 1 (entries before it are only in the snapshot).
	extra := []string{"--raft-trailing-logs", "8"}
	p, c := n.serveWith(extra)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for i := range damagedHosts {
		if i == damagedHosts-10 {
			if _, err := c.Snapshot(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := c.ApplyHost(ctx, &wire.Host{Name: fmt.Sprintf("r1-h%03d", i), Rack: "r1"}); err != nil {
			t.Fatal(err)
		}
	}
	p.Stop(30 * time.Second)
	if first := boltFirstIndex(t, n.dir); first <= 1 {
		t.Fatalf("the snapshot left the log uncompacted (first index %d); the test needs a compacted log", first)
	}
	bin := n.c.Bin
	if code, out := runInspect(t, bin, n.dir); code != 0 || !strings.Contains(out, fmt.Sprintf("%d / ", damagedHosts)) {
		t.Fatalf("inspect of the intact data dir: exit %d, want 0 and %d hosts:\n%s", code, damagedHosts, out)
	}

	for _, tc := range []struct {
		name   string
		file   string // named in the refusal, relative to the data dir
		damage func(t *testing.T, dir string)
	}{
		{"raft.db cut to half", "raft.db", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "raft.db")
			info, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, info.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"raft.db empty", "raft.db", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "raft.db"), 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"raft.db deleted", "raft.db", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "raft.db")); err != nil {
				t.Fatal(err)
			}
		}},
		{"snapshots deleted", "snapshots", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "snapshots")); err != nil {
				t.Fatal(err)
			}
		}},
		{"every snapshot damaged", "snapshots", func(t *testing.T, dir string) {
			files, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*", "state.bin"))
			if len(files) == 0 {
				t.Fatal("no snapshot to damage")
			}
			for _, f := range files {
				flipByte(t, f)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			copyDir(t, n.dir, dir)
			tc.damage(t, dir)
			want := filepath.Join(dir, tc.file)

			d := logStoreNodeIn(t, filepath.Dir(dir), n.c.HTTPPort, n.c.RaftPort)
			p := d.c.Launch(extra...)
			err, done := p.Wait(60 * time.Second)
			if !done {
				t.Fatalf("the member started on a data dir with %s; want a refusal:\n%s", tc.name, p.Output())
			}
			checkRefusal(t, "start", exitCode(err), p.Output(), want)
			code, out := runInspect(t, bin, dir)
			checkRefusal(t, "inspect", code, out, want)
		})
	}
}

// checkRefusal wants exit 6, the damaged file and the runbook named, and
// no crash.
func checkRefusal(t *testing.T, what string, code int, out, file string) {
	t.Helper()
	if code != daemon.ExitDataDamaged {
		t.Errorf("%s exited %d, want %d (damaged data file):\n%s", what, code, daemon.ExitDataDamaged, tail(out))
	}
	for _, bad := range []string{"panic:", "fatal error", "goroutine "} {
		if strings.Contains(out, bad) {
			t.Errorf("%s crashed (%q in its output):\n%s", what, bad, tail(out))
		}
	}
	for _, w := range []string{file, "rackfencectl cluster remove", "move its data dir aside", "restore the latest backup"} {
		if !strings.Contains(out, w) {
			t.Errorf("%s: the refusal does not say %q:\n%s", what, w, tail(out))
		}
	}
}

func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 30 {
		lines = append([]string{fmt.Sprintf("... (%d lines)", len(lines))}, lines[len(lines)-30:]...)
	}
	return strings.Join(lines, "\n")
}

func runInspect(t *testing.T, bin, dir string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "inspect", "--data-dir", dir).CombinedOutput()
	return exitCode(err), string(out)
}

// exitCode is the exit code of a finished command (-1: killed or not run).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// serveWith starts the node with extra flags and waits until it takes a
// write.
func (n *logStoreNode) serveWith(extra []string) (*testenv.Process, *client.Client) {
	n.c.Start(extra...)
	n.c.WaitWritable(false)
	return n.c.Proc, n.c.Admin
}

// boltFirstIndex reads the first Raft log index kept in raft.db (node
// stopped).
func boltFirstIndex(t *testing.T, dir string) uint64 {
	b, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	first, err := b.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	return first
}

// flipByte inverts the middle byte of file.
func flipByte(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil || len(b) == 0 {
		t.Fatalf("read %s: %v (%d bytes)", file, err, len(b))
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies the regular files and directories under src to dst.
func copyDir(t *testing.T, src, dst string) {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
