package main

import (
	"strings"
	"testing"
)

func TestEventFlagsValidated(t *testing.T) {
	for _, c := range []struct {
		name, prov string
		f          eventFlags
		want       string // "" = valid
	}{
		{"off", provDirect, eventFlags{}, ""},
		{"url without addr", provDirect, eventFlags{url: "https://x:1"}, "--events-url needs --events-addr"},
		{"ironic", provIronic, eventFlags{addr: "10.0.0.5:8443"}, "leave it out"},
		{"no port", provDirect, eventFlags{addr: "10.0.0.5"}, `--events-addr "10.0.0.5"`},
		{"every address no url", provDirect, eventFlags{addr: ":8443"}, "set --events-url"},
		{"every address with url", provDirect, eventFlags{addr: "0.0.0.0:8443", url: "https://10.0.0.5:8443"}, ""},
		{"http url", provDirect, eventFlags{addr: "10.0.0.5:8443", url: "http://10.0.0.5:8443"}, "not an https:// URL"},
		{"url with a path", provDirect, eventFlags{addr: "10.0.0.5:8443", url: "https://10.0.0.5:8443/x"}, "without a path"},
		{"cert without key", provDirect, eventFlags{addr: "10.0.0.5:8443", cert: "c.pem"}, "go together"},
		{"negative silence", provDirect, eventFlags{silence: -1}, "must not be negative"},
		{"good", provDirect, eventFlags{addr: "10.0.0.5:8443"}, ""},
	} {
		err := c.f.validate(c.prov)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want one with %q", c.name, err, c.want)
		}
	}
}
