// Package jsonl is the one JSON-lines appender behind rackfence's audit
// files: the coordinator's operator audit trail (coordinator/api), the
// agent's guarded-call audit (agent/guard) and bmcsim's record of mutating
// BMC calls (testkit/bmcsim).
//
// A Writer appends one JSON object per line to a file opened append-only
// with mode 0600 (an existing file is set to 0600 too). Each line is one
// write(2) under the Writer's mutex, so concurrent Appends never interleave
// and a reader never sees half a line except the one being written. With
// Options.MaxBytes the file is rotated by size: when a line would take it
// past MaxBytes it is renamed to FILE.1 (replacing the previous FILE.1) and
// a new FILE is started, so at most about twice MaxBytes is kept. Lines are not fsynced: a
// record is in the page cache when Append returns.
//
// Read and Back are the readers: Read for a whole file (tests, tools), Back
// for pages of records from the newest back across FILE and FILE.1 (the
// coordinator's GET /v1/audit).
package jsonl

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Perm is the mode of every file a Writer creates (and sets on an existing
// one): audit files name hosts, actors and addresses, so only the owner
// reads them.
const Perm = 0o600

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("jsonl: file is closed")

// Options tune a Writer. The zero value appends forever without fsync.
type Options struct {
	// MaxBytes is the size at which the file is rotated to PATH.1 (the
	// previous PATH.1 is dropped). 0 never rotates. A single line longer
	// than MaxBytes is still written, alone in its file.
	MaxBytes int64
}

// Writer appends JSON lines to one file. Safe for concurrent use.
type Writer struct {
	path string
	opt  Options

	mu     sync.Mutex
	f      *os.File // nil after Close, or after a rotation could not reopen
	size   int64
	closed bool
}

// Open opens (creating or appending to) path.
func Open(path string, opt Options) (*Writer, error) {
	w := &Writer{path: path, opt: opt}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, Perm)
	if err != nil {
		return fmt.Errorf("open %s: %w; check the directory exists and is writable", w.path, err)
	}
	if err := f.Chmod(Perm); err != nil {
		f.Close()
		return fmt.Errorf("set the mode of %s to %o: %w", w.path, Perm, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat %s: %w", w.path, err)
	}
	w.f, w.size = f, st.Size()
	return nil
}

// Path is the file's path.
func (w *Writer) Path() string { return w.path }

// Append writes v as one JSON line, rotating first when the line would take
// the file past MaxBytes. If the rotation fails the line is appended to the
// current file anyway and the rotation error is returned.
func (w *Writer) Append(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("jsonl %s: %w", w.path, err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.f == nil { // the last rotation renamed the file but could not reopen
		if err := w.open(); err != nil {
			return err
		}
	}
	var rotErr error
	if w.opt.MaxBytes > 0 && w.size > 0 && w.size+int64(len(b)) > w.opt.MaxBytes {
		rotErr = w.rotate()
		if w.f == nil {
			return rotErr
		}
	}
	prev := w.size
	n, err := w.f.Write(b) // one write per line: readers never see half a line
	w.size += int64(n)
	if err != nil {
		err = fmt.Errorf("jsonl %s: %w", w.path, err)
		if n > 0 {
			err = w.cutPartial(prev, err)
		}
	}
	return errors.Join(rotErr, err)
}

// cutPartial truncates the file back to size after a short write (a full
// disk takes the part of a line that fits in the file's last block).
// Left there, the part would join the next line written once space is
// free, and Read refuses a bad line before the last: the whole file
// would no longer read. Truncating frees blocks, so it works on a full
// disk.
func (w *Writer) cutPartial(size int64, err error) error {
	if terr := w.f.Truncate(size); terr != nil {
		return fmt.Errorf("%w; part of the line stays in the file, which will not read past it: %v", err, terr)
	}
	w.size = size
	return err
}

// rotate renames the file to PATH.1 and starts a new one. When the rename
// fails the current file stays open (and keeps growing); w.f is nil only
// when the new file could not be opened (the next Append tries again).
func (w *Writer) rotate() error {
	if err := os.Rename(w.path, w.path+".1"); err != nil {
		return fmt.Errorf("rotate %s: %w", w.path, err)
	}
	old := w.f
	w.f = nil
	old.Close()
	return w.open()
}

// Close closes the file; later Appends return ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
