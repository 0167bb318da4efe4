package ctl

import (
	"strings"
	"testing"
)

func TestParseHosts(t *testing.T) {
	var warnings []string
	warn := func(s string) { warnings = append(warnings, s) }
	cases := []struct {
		name, in string
		n        int
		err      string
	}{
		{"yaml documents", "# c\n---\nname: a\nrack: r1\n---\n---\nname: b\nrack: r1\n", 2, ""},
		{"json array", `[{"name":"a","rack":"r1"},{"name":"b","rack":"r1"}]`, 2, ""},
		{"list object", `{"items":[{"name":"a","rack":"r1"}],"index":7}`, 1, ""},
		{"bad field", "name: a\nrack: R1\n", 0, "field rack"},
		{"bad mac", "name: a\nrack: r1\nbootMACAddress: nope\n", 0, "field bootMACAddress"},
		{"names the document", "name: a\nrack: r1\n---\nname: b\nrack: r1\nbmc: {address: \"ftp://x\"}\n", 0, "document 2: host b: field bmc.address"},
		{"scalar", "42\n", 0, "expected a host object"},
		{"bad yaml", "name: [a\n", 0, "not valid YAML"},
		{"empty", "# nothing\n", 0, ""},
	}
	for _, tc := range cases {
		hs, err := parseHosts([]byte(tc.in), warn)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case len(hs) != tc.n:
			t.Errorf("%s: %d hosts, want %d", tc.name, len(hs), tc.n)
		}
	}
	warnings = nil
	hs, err := parseHosts([]byte("name: a\nrack: r1\nbootMAC: 52:54:00:00:00:01\n"), warn)
	if err != nil || len(hs) != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "bootMAC") {
		t.Errorf("misspelt field: %v %v %q", hs, err, warnings)
	}
}

// FuzzParseHosts: no input file makes host apply panic, and whatever it
// accepts passed validation.
func FuzzParseHosts(f *testing.F) {
	f.Add([]byte("name: a\nrack: r1\n---\nname: b\nrack: r2\nbmc: {address: \"ipmi://h:623\"}\n"))
	f.Add([]byte(`{"items":[{"name":"a","rack":"r1","image":{"url":"http://x/y"}}]}`))
	f.Add([]byte(`[{"name":"a","rack":"r1","bootMACAddress":"52:54:00:00:00:01"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hs, err := parseHosts(data, func(string) {})
		if err != nil {
			return
		}
		for _, h := range hs {
			if h.Name == "" || h.Rack == "" {
				t.Fatalf("accepted a host without name or rack: %+v", h)
			}
		}
	})
}
