package seal

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary key files (a joining member parses one it
// received): Parse must refuse garbage without panicking, never quote key
// material in its error, and what it accepts must marshal back to an equal
// keyring.
func FuzzParse(f *testing.F) {
	k, _ := Generate()
	k, _ = k.WithNewKey()
	f.Add(k.Marshal())
	f.Add([]byte("k1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"))
	f.Add([]byte("# c\n\nk1 AAAA\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Parse(b)
		if err != nil {
			for _, line := range strings.Split(string(b), "\n") {
				// The key ID may be quoted, and may hold the key's text
				// (an ID of 41 zeros, a key of 40): look past it.
				if fs := strings.Fields(line); len(fs) == 2 && len(fs[1]) >= 40 && strings.Contains(strings.ReplaceAll(err.Error(), fs[0], ""), fs[1]) {
					t.Fatalf("error quotes a key: %v", err)
				}
			}
			return
		}
		again, err := Parse(got.Marshal())
		if err != nil || strings.Join(again.IDs(), ",") != strings.Join(got.IDs(), ",") {
			t.Fatalf("marshal round trip: %v %v %v", got.IDs(), again, err)
		}
		s, err := got.Seal([]byte("x"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if p, err := again.Open(s, nil); err != nil || string(p) != "x" {
			t.Fatalf("reparsed keyring cannot open: %v", err)
		}
	})
}
