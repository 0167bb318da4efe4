package wire

import (
	"encoding/hex"
	"strings"
)

// Token text. A token as handed to an operator or an agent is either the
// bare SECRET (64 hex digits, what older releases wrote) or
//
//	rf1-<CA SHA-256, 64 hex digits>-<SECRET>
//
// which also pins the cluster's CA (as Docker swarm's join tokens do): a
// joining member or an agent that holds such a token needs no CA file, it
// checks that the server's chain ends in a CA whose certificate hashes to
// the pin. Only SECRET authenticates; clients send only SECRET as the
// bearer, and the server strips a pin a client sent anyway.
const tokenPrefix = "rf1-"

// ParseToken splits token text into its secret and its CA pin (hex SHA-256
// of the CA certificate's DER bytes; "" when the text carries none).
func ParseToken(text string) (secret, caPin string) {
	text = strings.TrimSpace(text)
	rest, ok := strings.CutPrefix(text, tokenPrefix)
	if !ok {
		return text, ""
	}
	pin, sec, ok := strings.Cut(rest, "-")
	if !ok || len(pin) != 64 || sec == "" {
		return text, ""
	}
	if _, err := hex.DecodeString(pin); err != nil {
		return text, ""
	}
	return sec, strings.ToLower(pin)
}

// FormatToken joins a secret and a CA pin into token text; with no pin it
// is the bare secret.
func FormatToken(secret, caPin string) string {
	if caPin == "" {
		return secret
	}
	return tokenPrefix + strings.ToLower(caPin) + "-" + secret
}
