package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// MaxLine is the longest line the readers accept.
const MaxLine = 1 << 20

// Read returns every record of the file at path, oldest first. A file not
// yet created reads as empty, and a last line that does not parse (still
// being written) is left out; any other bad line is an error.
func Read[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	var bad error
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for n := 1; sc.Scan(); n++ {
		if bad != nil {
			return out, bad
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			bad = fmt.Errorf("jsonl %s: line %d %q: %w", path, n, sc.Text(), err)
			continue
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Tail returns the newest n records of w's file and, when that holds fewer,
// of its rotated FILE.1, oldest first. Lines that do not parse are skipped.
// It holds w's lock, so no rotation happens while it reads.
func Tail[T any](w *Writer, n int) ([]T, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []T // newest first
	for _, p := range []string{w.path, w.path + ".1"} {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
		for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
			var v T
			if len(lines[i]) > 0 && json.Unmarshal(lines[i], &v) == nil {
				out = append(out, v)
			}
		}
		if len(out) >= n {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
