package jsonl

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// pagesBack reads every page Back gives from the end, n records a page,
// and returns them oldest first.
func pagesBack(t *testing.T, w *Writer, n int) (all []rec, pages int) {
	t.Helper()
	var p Pos
	for {
		recs, next, more, err := Back[rec](w, p, n)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if len(recs) > n {
			t.Fatalf("page %d holds %d records, asked %d", pages, len(recs), n)
		}
		pages++
		all = append(recs, all...)
		if !more {
			return all, pages
		}
		p = next
	}
}

func checkRun(t *testing.T, got []rec, from, to int) {
	t.Helper()
	if len(got) != to-from {
		t.Fatalf("%d records, want %d..%d", len(got), from, to-1)
	}
	for i, r := range got {
		if r.N != from+i {
			t.Fatalf("record %d is %d, want %d (got %v)", i, r.N, from+i, got)
		}
	}
}

// Pages read backwards through FILE and FILE.1 give every record once, in
// order, whatever the page size; records longer than one read block too.
func TestBackPagesAcrossRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	w := openT(t, path, Options{MaxBytes: 2000})
	for i := 0; i < 100; i++ {
		if err := w.Append(rec{N: i, Note: "abcdefghij"}); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := Read[rec](path)
	old, _ := Read[rec](path + ".1")
	first := 100 - len(cur) - len(old)
	for _, n := range []int{1, 7, len(cur), len(cur) + 1, 1000} {
		got, _ := pagesBack(t, w, n)
		checkRun(t, got, first, 100)
	}

	long := filepath.Join(t.TempDir(), "long.log")
	lw := openT(t, long, Options{})
	for i := 0; i < 5; i++ {
		if err := lw.Append(rec{N: i, Note: strings.Repeat("x", backBlock*3/2)}); err != nil {
			t.Fatal(err)
		}
	}
	got, pages := pagesBack(t, lw, 2)
	checkRun(t, got, 0, 5)
	if pages != 3 {
		t.Fatalf("%d pages of 2 for 5 records, want 3", pages)
	}
}

// Records appended after the first page are not in the later pages: a
// list read page by page is the trail as it was at its first page.
func TestBackStableWhileAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	w := openT(t, path, Options{})
	for i := 0; i < 10; i++ {
		_ = w.Append(rec{N: i})
	}
	recs, next, more, err := Back[rec](w, Pos{}, 4)
	if err != nil || !more {
		t.Fatal(err, more)
	}
	checkRun(t, recs, 6, 10)
	for i := 10; i < 20; i++ {
		_ = w.Append(rec{N: i})
	}
	recs, next, more, err = Back[rec](w, next, 4)
	if err != nil || !more {
		t.Fatal(err, more)
	}
	checkRun(t, recs, 2, 6)
	recs, _, more, err = Back[rec](w, next, 4)
	if err != nil || more {
		t.Fatal(err, more)
	}
	checkRun(t, recs, 0, 2)
}

// A position in FILE survives one rotation (FILE is FILE.1 then) and is
// ErrRotatedAway after the second, also when the new FILE took the
// dropped file's inode.
func TestBackRotatedAway(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	w := openT(t, path, Options{MaxBytes: 400})
	for i := 0; i < 10; i++ {
		_ = w.Append(rec{N: i, Note: "abcdefghij"})
	}
	recs, next, _, err := Back[rec](w, Pos{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, recs, 8, 10)
	i := 10
	rotateOnce := func() {
		t.Helper()
		before, _ := fileAt(path)
		for ; ; i++ {
			_ = w.Append(rec{N: i, Note: "abcdefghij"})
			if now, _ := fileAt(path); now.head != before.head {
				return
			}
		}
	}
	rotateOnce()
	recs, _, _, err = Back[rec](w, next, 2)
	if err != nil {
		t.Fatalf("after one rotation: %v", err)
	}
	checkRun(t, recs, 6, 8)
	rotateOnce()
	if _, _, _, err = Back[rec](w, next, 2); !errors.Is(err, ErrRotatedAway) {
		t.Fatalf("after two rotations: %v, want ErrRotatedAway", err)
	}
	// The same inode with another first line is another file.
	cur, _ := fileAt(path)
	if _, _, _, err = Back[rec](w, Pos{Inode: cur.inode, Head: cur.head + 2, Off: 1}, 2); !errors.Is(err, ErrRotatedAway) {
		t.Fatalf("same inode, other file: %v, want ErrRotatedAway", err)
	}
}

// An empty FILE right after a rotation: the first page is FILE.1's end.
func TestBackEmptyFileAfterRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	w := openT(t, path, Options{})
	_ = w.Append(rec{N: 1})
	_ = w.Append(rec{N: 2})
	w.mu.Lock()
	err := w.rotate()
	w.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	recs, _, more, err := Back[rec](w, Pos{}, 5)
	if err != nil || more {
		t.Fatal(err, more)
	}
	checkRun(t, recs, 1, 3)
}

// TestBackNothingWritten: a member whose trail is still empty (no FILE
// content, no FILE.1) answers an empty first page, not a panic.
func TestBackNothingWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	w := openT(t, path, Options{})
	recs, next, more, err := Back[rec](w, Pos{}, 5)
	if err != nil || more || len(recs) != 0 || !next.IsZero() {
		t.Fatalf("empty trail: %v %v more=%v err=%v", recs, next, more, err)
	}
}
