package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type rec struct {
	N    int    `json:"n"`
	Note string `json:"note,omitempty"`
}

func openT(t *testing.T, path string, opt Options) *Writer {
	t.Helper()
	w, err := Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func TestAppendReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	w := openT(t, path, Options{})
	for i := 0; i < 3; i++ {
		if err := w.Append(rec{N: i, Note: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":0,"note":"x"}` + "\n" + `{"n":1,"note":"x"}` + "\n" + `{"n":2,"note":"x"}` + "\n"; string(b) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", b, want)
	}
	got, err := Read[rec](path)
	if err != nil || len(got) != 3 || got[2].N != 2 {
		t.Fatalf("Read = %+v, %v", got, err)
	}
}

// Reopening appends to what is there; the file is 0600 even when it existed
// with a wider mode.
func TestAppendsToExistingFileAndSetsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(path, []byte(`{"n":7}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	w := openT(t, path, Options{})
	if err := w.Append(rec{N: 8}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != Perm {
		t.Fatalf("mode %v; want %v", st.Mode().Perm(), os.FileMode(Perm))
	}
	got, err := Read[rec](path)
	if err != nil || len(got) != 2 || got[0].N != 7 || got[1].N != 8 {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	fresh := filepath.Join(t.TempDir(), "new.jsonl")
	openT(t, fresh, Options{})
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != Perm {
		t.Fatalf("new file: %v, %v", st, err)
	}
}

func TestOpenFailsWithAReason(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing-dir", "a.jsonl"), Options{})
	if err == nil || !strings.Contains(err.Error(), "check the directory exists") {
		t.Fatalf("Open in a missing directory: %v", err)
	}
}

// Concurrent appends never interleave: every line parses and none is lost.
func TestConcurrentAppendsStayWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	w := openT(t, path, Options{})
	long := strings.Repeat("y", 8<<10) // larger than a pipe buffer, many pages
	const goroutines, each = 8, 50
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := w.Append(rec{N: g*each + i, Note: long}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	got, err := Read[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, r := range got {
		if r.Note != long {
			t.Fatalf("record %d mangled", r.N)
		}
		seen[r.N] = true
	}
	if len(got) != goroutines*each || len(seen) != goroutines*each {
		t.Fatalf("%d records, %d distinct; want %d", len(got), len(seen), goroutines*each)
	}
}

// Rotation keeps each file within MaxBytes, drops the older FILE.1, and
// Back reads across FILE and FILE.1.
func TestRotationAndBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	const max = 200
	w := openT(t, path, Options{MaxBytes: max})
	line := len(`{"n":10,"note":"abcdefghij"}` + "\n") // 29 bytes for two-digit n
	for i := 10; i < 60; i++ {
		if err := w.Append(rec{N: i, Note: "abcdefghij"}); err != nil {
			t.Fatal(err)
		}
	}
	perFile := max / line // 6 records fit in 200 bytes
	cur, err := Read[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := Read[rec](path + ".1")
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != perFile || len(cur) == 0 || len(cur) > perFile {
		t.Fatalf("after rotation: %d in .1, %d current; want %d and 1..%d", len(old), len(cur), perFile, perFile)
	}
	if cur[len(cur)-1].N != 59 || old[len(old)-1].N+1 != cur[0].N {
		t.Fatalf("not contiguous: .1 ends at %d, current %d..%d", old[len(old)-1].N, cur[0].N, cur[len(cur)-1].N)
	}
	for _, p := range []string{path, path + ".1"} {
		st, err := os.Stat(p)
		if err != nil || st.Size() > max || st.Mode().Perm() != Perm {
			t.Fatalf("%s: %v, %v", p, st, err)
		}
	}

	n := len(cur) + 2
	tail, _, _, err := Back[rec](w, Pos{}, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) != n || tail[0].N != 60-n || tail[n-1].N != 59 {
		t.Fatalf("Back(%d) = %+v", n, tail)
	}
	all, _, more, err := Back[rec](w, Pos{}, 1000)
	if more {
		t.Fatal("Back(1000) of every record says more are left")
	}
	if err != nil || len(all) != len(cur)+len(old) || all[0].N != old[0].N {
		t.Fatalf("Back(1000) = %d records, %v; want %d (older ones dropped)", len(all), err, len(cur)+len(old))
	}
}

// A line longer than MaxBytes still goes out, alone in its file.
func TestOversizedLineIsWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	w := openT(t, path, Options{MaxBytes: 10})
	for i := 0; i < 2; i++ {
		if err := w.Append(rec{N: i, Note: "longer than ten bytes"}); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := Read[rec](path)
	old, _ := Read[rec](path + ".1")
	if len(cur) != 1 || cur[0].N != 1 || len(old) != 1 || old[0].N != 0 {
		t.Fatalf("current %+v, .1 %+v", cur, old)
	}
}

// When FILE cannot be renamed to FILE.1, the record still goes to FILE and
// the error says why.
func TestRotationFailureKeepsAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	w := openT(t, path, Options{MaxBytes: 40})
	if err := w.Append(rec{N: 1, Note: "0123456789"}); err != nil {
		t.Fatal(err)
	}
	// A non-empty directory named FILE.1: rename(2) cannot replace it.
	if err := os.MkdirAll(filepath.Join(path+".1", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := w.Append(rec{N: 2, Note: "0123456789"})
	if err == nil || !strings.Contains(err.Error(), "rotate") {
		t.Fatalf("Append with a blocked rotation: %v; want a rotate error", err)
	}
	got, rerr := Read[rec](path)
	if rerr != nil || len(got) != 2 || got[1].N != 2 {
		t.Fatalf("Read = %+v, %v; the record must be kept", got, rerr)
	}
}

func TestAppendAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(rec{N: 1}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v; want ErrClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got, _ := Read[rec](path); len(got) != 0 {
		t.Fatalf("records after Close: %+v", got)
	}
}

func TestAppendUnmarshalable(t *testing.T) {
	w := openT(t, filepath.Join(t.TempDir(), "a.jsonl"), Options{})
	if err := w.Append(func() {}); err == nil {
		t.Fatal("a func marshalled")
	}
}

func TestReadMissingAndPartial(t *testing.T) {
	dir := t.TempDir()
	if got, err := Read[rec](filepath.Join(dir, "none")); err != nil || got != nil {
		t.Fatalf("missing file: %+v, %v", got, err)
	}
	partial := filepath.Join(dir, "partial")
	if err := os.WriteFile(partial, []byte(`{"n":1}`+"\n"+`{"n":2`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Read[rec](partial); err != nil || len(got) != 1 || got[0].N != 1 {
		t.Fatalf("last line being written: %+v, %v; want it left out", got, err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte(`{"n":1}`+"\n"+"garbage\n"+`{"n":3}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Read[rec](bad); err == nil || !strings.Contains(err.Error(), "line 2") || len(got) != 1 {
		t.Fatalf("bad middle line: %+v, %v; want an error naming line 2", got, err)
	}
}
