package wire

import (
	"regexp"
	"testing"
)

// The pattern docs/api.md gives for names; isLabel must agree with it.
var labelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func TestIsLabelMatchesPattern(t *testing.T) {
	for _, v := range []string{"", "a", "-", "a-", "-a", "a-b", "r1", "R1", "a_b", "a.b", "ab-12-c", "é", "a--b", "0", "host-000001"} {
		if got, want := isLabel(v), labelRE.MatchString(v); got != want {
			t.Errorf("isLabel(%q) = %v, the pattern says %v", v, got, want)
		}
	}
}

func FuzzIsLabel(f *testing.F) {
	for _, s := range []string{"a", "a-b", "-", "A", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := isLabel(v), labelRE.MatchString(v); got != want {
			t.Fatalf("isLabel(%q) = %v, the pattern says %v", v, got, want)
		}
	})
}
