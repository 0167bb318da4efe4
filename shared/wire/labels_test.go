package wire

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The Kubernetes patterns the loops in labels.go implement.
var (
	labelNameRE  = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	dnsSubRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelValueRE = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

// keyByPattern is the key rule written with the patterns.
func keyByPattern(k string) bool {
	name := k
	if i := strings.IndexByte(k, '/'); i >= 0 {
		prefix := k[:i]
		if len(prefix) > MaxLabelPrefixLen || !dnsSubRE.MatchString(prefix) {
			return false
		}
		name = k[i+1:]
	}
	return len(name) <= MaxLabelNameLen && labelNameRE.MatchString(name)
}

func valueByPattern(v string) bool { return len(v) <= MaxLabelNameLen && labelValueRE.MatchString(v) }

func TestLabelKeysAndValues(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tc := range []struct {
		key, value string
		ok         bool
		want       string // substring of the error
	}{
		{"role", "compute", true, ""},
		{"Role_1.x", "A-b_c.9", true, ""},
		{"example.com/role", "", true, ""},
		{"rackfence.io/zone", "a", true, ""},
		{long, long, true, ""},
		{long + "a", "x", false, "at most 63"},
		{"role", long + "a", false, "at most 63"},
		{"", "x", false, "name is empty"},
		{"/role", "x", false, "prefix before '/' is empty"},
		{"example.com/", "x", false, "name is empty"},
		{"Example.com/role", "x", false, "DNS subdomain"},
		{"a..b/role", "x", false, "DNS subdomain"},
		{strings.Repeat("a.", 127) + "ab/role", "x", false, "at most 253"},
		{"-role", "x", false, "starting and ending"},
		{"role-", "x", false, "starting and ending"},
		{"ro le", "x", false, "letters, digits"},
		{"a/b/c", "x", false, `name "b/c"`},
		{"role", "-x", false, `value "-x" of key "role"`},
		{"role", "a b", false, "must be empty or consist"},
		{"role", "é", false, "must be empty or consist"},
	} {
		err := ValidateLabels("labels", map[string]string{tc.key: tc.value})
		if (err == nil) != tc.ok {
			t.Errorf("%q=%q: err %v, want ok=%t", tc.key, tc.value, err, tc.ok)
			continue
		}
		if err == nil {
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "labels" {
			t.Errorf("%q=%q: %v is not a FieldError on labels", tc.key, tc.value, err)
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "key ") {
			t.Errorf("%q=%q: error %q does not say %q and name the key", tc.key, tc.value, err, tc.want)
		}
	}
	many := map[string]string{}
	for i := 0; i <= MaxLabels; i++ {
		many["k"+strconv.Itoa(i)] = "v"
	}
	if err := ValidateLabels("labels", many); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("too many labels: %v", err)
	}
}

func TestValidateHostChecksLabels(t *testing.T) {
	h := &Host{Name: "r1-h01", Rack: "r1", Labels: map[string]string{"role": "compute", "bad key": "x"}}
	err := ValidateHost(h, "r1-h01")
	if err == nil || !strings.Contains(err.Error(), `labels: key "bad key"`) {
		t.Fatalf("ValidateHost = %v, want the bad label key named", err)
	}
	delete(h.Labels, "bad key")
	if err := ValidateHost(h, "r1-h01"); err != nil {
		t.Fatal(err)
	}
}

func TestFormatLabels(t *testing.T) {
	got := FormatLabels(map[string]string{"zone": "a", "role": "compute", "gpu": ""})
	if got != "gpu=,role=compute,zone=a" {
		t.Fatalf("FormatLabels = %q", got)
	}
	sel, err := ParseSelector(got)
	if err != nil || !sel.Matches(map[string]string{"zone": "a", "role": "compute", "gpu": ""}) {
		t.Fatalf("formatted labels do not select themselves: %v", err)
	}
}

func FuzzLabelKey(f *testing.F) {
	for _, s := range []string{"role", "a/b", "example.com/x", "-", "A.b_c", "a..b/c", "/x", "x/", "é", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if got, want := labelKeyProblem(k) == "", keyByPattern(k); got != want {
			t.Fatalf("key %q: loop says valid=%t, the pattern says %t (%s)", k, got, want, labelKeyProblem(k))
		}
	})
}

func FuzzLabelValue(f *testing.F) {
	for _, s := range []string{"", "a", "a-b", "-", "A.b_c", "a b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := labelValueProblem(v) == "", valueByPattern(v); got != want {
			t.Fatalf("value %q: loop says valid=%t, the pattern says %t", v, got, want)
		}
	})
}
