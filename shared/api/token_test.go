package api

import (
	"strings"
	"testing"
)

func TestTokenRoundTrip(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	for _, tc := range []struct{ text, secret, pin string }{
		{"deadbeef", "deadbeef", ""},
		{"  deadbeef\n", "deadbeef", ""},
		{FormatToken("s3cret", pin), "s3cret", pin},
		{"rf1-" + strings.ToUpper(pin) + "-x", "x", pin},
		{"rf1-short-x", "rf1-short-x", ""},                                                       // not a pin: the whole text is the secret
		{"rf1-" + strings.Repeat("zz", 32) + "-x", "rf1-" + strings.Repeat("zz", 32) + "-x", ""}, // not hex
		{"rf1-" + pin + "-", "rf1-" + pin + "-", ""},                                             // no secret
	} {
		s, p := ParseToken(tc.text)
		if s != tc.secret || p != tc.pin {
			t.Errorf("ParseToken(%q) = %q, %q; want %q, %q", tc.text, s, p, tc.secret, tc.pin)
		}
	}
	if FormatToken("abc", "") != "abc" {
		t.Error("FormatToken without a pin must be the bare secret")
	}
}
