package wire

import (
	"fmt"
	"sort"
	"strings"
)

// Label rules are Kubernetes' (metadata.labels), so tooling and habits
// carry over:
//
//	key   = [prefix "/"] name
//	prefix: a DNS subdomain of at most 253 characters: dot-separated DNS
//	        labels of lower-case letters, digits and '-', each starting and
//	        ending with a letter or digit
//	name:  1 to 63 characters of [a-zA-Z0-9-_.], starting and ending with
//	       a letter or digit
//	value: empty, or like name
//
// Like names, they are checked by loops rather than regexps (they run on
// every PUT and every selector); shared/wire's tests fuzz the loops against
// the patterns.
const (
	// MaxLabelNameLen bounds a label key's name part and a label value.
	MaxLabelNameLen = 63
	// MaxLabelPrefixLen bounds a label key's DNS-subdomain prefix.
	MaxLabelPrefixLen = 253
	// MaxLabels bounds the labels of one host.
	MaxLabels = 64
)

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isLabelName reports whether v matches
// ^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$ (length is checked apart).
func isLabelName(v string) bool {
	if v == "" || !isAlnum(v[0]) || !isAlnum(v[len(v)-1]) {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		c := v[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether v is dot-separated DNS labels
// (^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$).
func isDNSSubdomain(v string) bool {
	if v == "" {
		return false
	}
	for _, part := range strings.Split(v, ".") {
		if !isLabel(part) {
			return false
		}
	}
	return true
}

// labelKeyProblem says what is wrong with a label key, "" when nothing.
func labelKeyProblem(k string) string {
	name := k
	if prefix, rest, ok := strings.Cut(k, "/"); ok {
		switch {
		case prefix == "":
			return "the prefix before '/' is empty: write prefix/name (e.g. example.com/role) or just name"
		case len(prefix) > MaxLabelPrefixLen:
			return fmt.Sprintf("the prefix %q is %d characters long; at most %d are allowed", prefix, len(prefix), MaxLabelPrefixLen)
		case !isDNSSubdomain(prefix):
			return fmt.Sprintf("the prefix %q must be a DNS subdomain: lower-case letters, digits, '-' and '.', each dot-separated part starting and ending with a letter or digit (e.g. example.com)", prefix)
		}
		name = rest
	}
	switch {
	case name == "":
		return "the name is empty: a key is [prefix/]name with a name of 1 to 63 characters"
	case len(name) > MaxLabelNameLen:
		return fmt.Sprintf("the name %q is %d characters long; at most %d are allowed", name, len(name), MaxLabelNameLen)
	case !isLabelName(name):
		return fmt.Sprintf("the name %q must consist of letters, digits, '-', '_' or '.', starting and ending with a letter or digit", name)
	}
	return ""
}

// labelValueProblem says what is wrong with a label value, "" when nothing.
func labelValueProblem(v string) string {
	switch {
	case v == "":
		return ""
	case len(v) > MaxLabelNameLen:
		return fmt.Sprintf("is %d characters long; at most %d are allowed", len(v), MaxLabelNameLen)
	case !isLabelName(v):
		return "must be empty or consist of letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	}
	return ""
}

// ValidateLabelKey checks one label key; the error names field and key.
func ValidateLabelKey(field, k string) error {
	if p := labelKeyProblem(k); p != "" {
		return fieldErr(field, "key %q is not a valid label key: %s", k, p)
	}
	return nil
}

// ValidateLabelValue checks the value of label key k.
func ValidateLabelValue(field, k, v string) error {
	if p := labelValueProblem(v); p != "" {
		return fieldErr(field, "value %q of key %q %s", v, k, p)
	}
	return nil
}

// ValidateLabels checks a host's labels (Kubernetes syntax). Keys are
// checked in sorted order, so the error is the same on every call.
func ValidateLabels(field string, labels map[string]string) error {
	if len(labels) > MaxLabels {
		return fieldErr(field, "has %d labels; at most %d are allowed", len(labels), MaxLabels)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := ValidateLabelKey(field, k); err != nil {
			return err
		}
		if err := ValidateLabelValue(field, k, labels[k]); err != nil {
			return err
		}
	}
	return nil
}

// FormatLabels renders labels as k=v pairs sorted by key, comma-separated
// (the selector syntax, so the output can be pasted into -l).
func FormatLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
	}
	return b.String()
}
