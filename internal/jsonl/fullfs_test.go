package jsonl

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestAppendOnFullDiskLeavesNoPartialLine: on a real file system that
// fills up (a 64 KiB tmpfs), the line that does not fit is refused, no
// part of it stays in the file, and once space is free again the next
// line is written and the whole file reads.
func TestAppendOnFullDiskLeavesNoPartialLine(t *testing.T) {
	testenv.SkipShort(t)
	testenv.RequirePeer(t, os.Geteuid() == 0, "root, to mount a small tmpfs")
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		testenv.RequirePeer(t, false, "mount -t tmpfs ("+err.Error()+": "+string(out)+")")
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })

	w, err := Open(filepath.Join(dir, "audit.log"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	type rec struct {
		N   int
		Pad string
	}
	pad := strings.Repeat("x", 100)
	if err := w.Append(rec{0, pad}); err != nil {
		t.Fatal(err)
	}
	// Fill every free block, so the log can only grow inside its last one.
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 1024)); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	written := 1
	var refused error
	for i := 1; i < 1000 && refused == nil; i++ {
		if refused = w.Append(rec{i, pad}); refused == nil {
			written++
		}
	}
	if !errors.Is(refused, syscall.ENOSPC) {
		t.Fatalf("appending on a full file system: %v, want ENOSPC", refused)
	}
	st, err := os.Stat(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll[rec](t, w.Path()); len(got) != written {
		t.Fatalf("%d records read, %d written", len(got), written)
	}
	if b, _ := os.ReadFile(w.Path()); len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("the file (%d bytes) ends inside a line: %q", st.Size(), b[len(b)-40:])
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(rec{-1, pad}); err != nil {
		t.Fatalf("appending once space is free: %v", err)
	}
	got := readAll[rec](t, w.Path())
	if len(got) != written+1 || got[len(got)-1].N != -1 {
		t.Fatalf("after space was freed: %d records (want %d), last %+v", len(got), written+1, got[len(got)-1])
	}
	t.Logf("%d records fitted, the next was refused whole (%v)", written, refused)
}

func readAll[T any](t *testing.T, path string) []T {
	t.Helper()
	got, err := Read[T](path)
	if err != nil {
		t.Fatalf("the file does not read: %v", err)
	}
	return got
}
