package wire

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Selector
	}{
		{"", nil},
		{"   ", nil},
		{"role=compute", Selector{{"role", OpEquals, []string{"compute"}}}},
		{"role==compute", Selector{{"role", OpEquals, []string{"compute"}}}},
		{" role = compute ", Selector{{"role", OpEquals, []string{"compute"}}}},
		{"role!=compute", Selector{{"role", OpNotEquals, []string{"compute"}}}},
		{"role=", Selector{{"role", OpEquals, []string{""}}}},
		{"role!=,zone", Selector{{"role", OpNotEquals, []string{""}}, {"zone", OpExists, nil}}},
		{"gpu", Selector{{"gpu", OpExists, nil}}},
		{"!gpu", Selector{{"gpu", OpDoesNotExist, nil}}},
		{"! gpu", Selector{{"gpu", OpDoesNotExist, nil}}},
		{"zone in (a,b)", Selector{{"zone", OpIn, []string{"a", "b"}}}},
		{"zone in(a, b )", Selector{{"zone", OpIn, []string{"a", "b"}}}},
		{"zone notin (a)", Selector{{"zone", OpNotIn, []string{"a"}}}},
		{"example.com/role=compute,zone in (a,b),!maint,rack!=r9",
			Selector{{"example.com/role", OpEquals, []string{"compute"}}, {"zone", OpIn, []string{"a", "b"}},
				{"maint", OpDoesNotExist, nil}, {"rack", OpNotEquals, []string{"r9"}}}},
		{"in", Selector{{"in", OpExists, nil}}},
		{"in in (in)", Selector{{"in", OpIn, []string{"in"}}}},
	} {
		got, err := ParseSelector(tc.in)
		if err != nil {
			t.Errorf("ParseSelector(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSelector(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestParseSelectorErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		pos  int
		want string
	}{
		{"role=compute,", 13, "followed by another requirement"},
		{",role", 1, "expected a label key, found ','"},
		{"role compute", 6, `expected an operator after key "role", found "compute"`},
		{"role=a=b", 7, "expected ',' or the end"},
		{"zone in a,b", 9, "expected '(' after in"},
		{"zone in ()", 10, `expected a value for key "zone", found ')'`},
		{"zone in (a", 11, "expected ',' or ')'"},
		{"zone in (a b)", 12, "expected ',' or ')'"},
		{"bad key!=x", 5, `expected an operator after key "bad"`},
		{"-role=x", 1, `key "-role" is not a valid label key`},
		{"role=-x", 6, `value "-x" of key "role"`},
		{"Example.com/role", 1, "DNS subdomain"},
		{"!", 2, "expected a label key, found the end"},
		{"!role=x", 6, "expected ',' or the end after the requirement \"!role\""},
		{"role=(x)", 6, `expected a value for key "role", found '('`},
	} {
		_, err := ParseSelector(tc.in)
		var se *SelectorError
		if !errors.As(err, &se) {
			t.Errorf("ParseSelector(%q) = %v, want a SelectorError", tc.in, err)
			continue
		}
		if se.Pos+1 != tc.pos || !strings.Contains(se.Error(), tc.want) {
			t.Errorf("ParseSelector(%q) = %q (character %d), want character %d saying %q", tc.in, se, se.Pos+1, tc.pos, tc.want)
		}
	}
}

func TestSelectorMatches(t *testing.T) {
	compute := map[string]string{"role": "compute", "zone": "a"}
	storage := map[string]string{"role": "storage", "zone": "b", "gpu": ""}
	bare := map[string]string(nil)
	for _, tc := range []struct {
		sel  string
		want [3]bool // compute, storage, bare
	}{
		{"", [3]bool{true, true, true}},
		{"role=compute", [3]bool{true, false, false}},
		{"role!=compute", [3]bool{false, true, true}},
		{"gpu", [3]bool{false, true, false}},
		{"!gpu", [3]bool{true, false, true}},
		{"gpu=", [3]bool{false, true, false}},
		{"zone in (a,b)", [3]bool{true, true, false}},
		{"zone notin (a)", [3]bool{false, true, true}},
		{"role=compute,zone=b", [3]bool{false, false, false}},
		{"role in (compute,storage),zone!=b", [3]bool{true, false, false}},
	} {
		sel, err := ParseSelector(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range []map[string]string{compute, storage, bare} {
			if got := sel.Matches(l); got != tc.want[i] {
				t.Errorf("%q matches %v = %t, want %t", tc.sel, l, got, tc.want[i])
			}
		}
	}
}

// FuzzParseSelector: parsing never panics; what parses has only valid keys
// and values, prints back to a selector that parses to the same thing, and
// an error always points inside the input (or just past it).
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"a=b", "a==b,c!=d", "!a", "a in (b,c)", "a notin (b)", "x/y=z", "a=", ",", "a in (", "((", "!=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			var se *SelectorError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("ParseSelector(%q): bad error %v", s, err)
			}
			return
		}
		for _, r := range sel {
			if !keyByPattern(r.Key) {
				t.Fatalf("ParseSelector(%q) accepted key %q", s, r.Key)
			}
			for _, v := range r.Values {
				if !valueByPattern(v) {
					t.Fatalf("ParseSelector(%q) accepted value %q", s, v)
				}
			}
		}
		again, err := ParseSelector(sel.String())
		if err != nil || !reflect.DeepEqual(again, sel) {
			t.Fatalf("ParseSelector(%q) = %#v; its String %q parses to %#v, %v", s, sel, sel.String(), again, err)
		}
	})
}
