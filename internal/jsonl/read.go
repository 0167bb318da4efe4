package jsonl

import (
	"bufio"
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
