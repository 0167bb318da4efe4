package wire

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

// FuzzParseToken: any text parses without panicking; a pin, when found,
// is 64 lower-case hex digits and the text is exactly FormatToken of the
// parts (so nothing of the secret is lost or invented).
func FuzzParseToken(f *testing.F) {
	f.Add("deadbeef")
	f.Add(FormatToken("s3cret", strings.Repeat("ab", 32)))
	f.Add("rf1-" + strings.Repeat("AB", 32) + "-x-y")
	f.Add("rf1--")
	f.Fuzz(func(t *testing.T, text string) {
		secret, pin := ParseToken(text)
		if pin == "" {
			if secret != strings.TrimSpace(text) {
				t.Fatalf("no pin, but the secret %q is not the trimmed text %q", secret, text)
			}
			return
		}
		if len(pin) != 64 || strings.ToLower(pin) != pin || secret == "" {
			t.Fatalf("pin %q, secret %q", pin, secret)
		}
		if !strings.EqualFold(FormatToken(secret, pin), strings.TrimSpace(text)) {
			t.Fatalf("FormatToken(%q, %q) is not %q", secret, pin, text)
		}
	})
}
