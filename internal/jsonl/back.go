package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Pos is a place in a Writer's files for reading them backwards: the
// records of one file that end at or before Off. The file is named by its
// inode and a hash of its first line (an inode alone can be reused by the
// next file once a rotation dropped FILE.1), so a Pos stays good while the
// file is FILE, and after a rotation made it FILE.1; it is gone once a
// second rotation dropped it. The zero Pos is the end of FILE now.
type Pos struct {
	Inode uint64 `json:"i"`
	Head  uint64 `json:"h"`
	Off   int64  `json:"o"`
}

// IsZero says whether p is the zero Pos (the end of FILE now).
func (p Pos) IsZero() bool { return p == Pos{} }

// ErrRotatedAway is returned by Back for a Pos whose file is neither FILE
// nor FILE.1 any more.
var ErrRotatedAway = errors.New("jsonl: the file of this position was rotated away")

// backBlock is how much Back reads at a time.
const backBlock = 64 << 10

// Back returns up to n records that end at or before from, newest last
// (oldest first), walking from FILE into FILE.1; next is where the records
// before them end, and more says whether there may be any. Records
// appended after from was taken are not read, so pages taken with the Pos
// each one returns are stable while the file grows. Lines that do not
// parse are skipped. It holds w's lock, so no rotation happens while it
// reads.
func Back[T any](w *Writer, from Pos, n int) (recs []T, next Pos, more bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur, err := fileAt(w.path)
	if err != nil {
		return nil, Pos{}, false, err
	}
	old, err := fileAt(w.path + ".1")
	if err != nil {
		return nil, Pos{}, false, err
	}
	var f *fileRef
	off := from.Off
	switch {
	case from.IsZero() && cur != nil:
		f, off = cur, cur.size
	case from.IsZero() && old != nil:
		f, off = old, old.size // FILE is new and empty
	case from.IsZero():
		return nil, Pos{}, false, nil // nothing written yet
	case cur.is(from):
		f = cur
	case old.is(from):
		f = old
	default:
		return nil, Pos{}, false, ErrRotatedAway
	}
	if off < 0 || f != nil && off > f.size {
		return nil, Pos{}, false, ErrRotatedAway
	}
	var out []T // newest first
	for f != nil {
		var start int64
		if out, start, err = readBack(f, off, n, out); err != nil {
			return nil, Pos{}, false, err
		}
		if start > 0 {
			return reverse(out), f.pos(start), true, nil
		}
		// This file's start: go on in FILE.1 after FILE.
		if f != cur || old == nil {
			break
		}
		f, off = old, old.size
		if len(out) >= n {
			return reverse(out), f.pos(off), true, nil
		}
	}
	return reverse(out), Pos{}, false, nil
}

func reverse[T any](s []T) []T {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	return s
}

// fileRef is one of a Writer's files as Back found it.
type fileRef struct {
	path  string
	inode uint64
	head  uint64
	size  int64
}

func (f *fileRef) is(p Pos) bool { return f != nil && f.inode == p.Inode && f.head == p.Head }

func (f *fileRef) pos(off int64) Pos { return Pos{Inode: f.inode, Head: f.head, Off: off} }

// fileAt describes the file at path (nil when there is none, or it is
// empty).
func fileAt(path string) (*fileRef, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, nil
	}
	f := &fileRef{path: path, size: st.Size()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		f.inode = uint64(sys.Ino)
	}
	head := make([]byte, min(st.Size(), 4096))
	if _, err := io.ReadFull(fh, head); err != nil {
		return nil, err
	}
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	h := fnv.New64a()
	h.Write(head)
	f.head = h.Sum64() | 1 // never 0: a Pos with Head 0 is no file's
	return f, nil
}

// readBack adds to out (newest first) the records of f that end at or
// before off until out holds n, and returns where the oldest one read
// starts (0: the file's start was reached).
func readBack[T any](f *fileRef, off int64, n int, out []T) ([]T, int64, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, 0, err
	}
	defer fh.Close()
	// pending is the bytes from lo to the last line taken: the end of a
	// line whose start is before lo.
	var pending []byte
	lo := off
	for lo > 0 {
		at := max(0, lo-backBlock)
		buf := make([]byte, lo-at, lo-at+int64(len(pending)))
		if _, err := fh.ReadAt(buf, at); err != nil {
			return nil, 0, err
		}
		buf = append(buf, pending...)
		lineEnd := len(buf)
		for i := len(buf) - 1; i >= -1; i-- {
			if i >= 0 && buf[i] != '\n' {
				continue
			}
			if i == -1 && at > 0 {
				break // the line's start is in an earlier block
			}
			if line := buf[i+1 : lineEnd]; len(line) > 0 {
				var v T
				if json.Unmarshal(line, &v) == nil {
					if out = append(out, v); len(out) >= n {
						return out, at + int64(i+1), nil
					}
				}
			}
			lineEnd = max(i, 0)
		}
		pending, lo = buf[:lineEnd], at
	}
	return out, 0, nil
}
