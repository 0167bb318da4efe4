package api

import (
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"
)

// The host documents of a list are written by appenders generated from
// the wire types (hostjson_gen.go): the bytes encoding/json's Encoder
// writes (HTML escaping on, fields in declaration order, maps by sorted
// key, omitempty and omitzero as it reads them), without its reflection,
// the interface boxing of time.Time and its per-map key slices.
// TestHostJSONGenerated regenerates them from the types (a type's new
// field is in the next list once regenerated; a stale file fails the
// test); TestHostJSONSameBytes and FuzzHostJSON compare them with
// encoding/json. What the generator does not write itself (a
// json.Marshaler other than time.Time, floats, interfaces, byte slices,
// embedded structs) is written by encoding/json (appendJSONValue).

// appendJSONString appends s as encoding/json writes a string with HTML
// escaping on (its Encoder's default).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// jsonSafe: ASCII bytes written as they are (not a control character,
// quote, backslash, or one of HTML's <, > and &).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONTime appends t as time.Time's MarshalJSON writes it (RFC
// 3339 with nanoseconds), failing as it does on a year outside 0–9999.
func appendJSONTime(b []byte, t time.Time) ([]byte, error) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return b, err
	}
	return append(b, '"'), nil
}

// appendJSONStrings appends a map of strings, keys sorted; nil is null.
func appendJSONStrings[S ~string](b []byte, m map[string]S) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var kept [16]string
	keys := kept[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, string(m[k]))
	}
	return append(b, '}')
}

// sortedJSONKeys returns m's keys sorted, in kept when they fit.
func sortedJSONKeys[K ~string, V any](m map[K]V, kept []string) []string {
	keys := kept[:0]
	for k := range m {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	return keys
}

// appendJSONValue appends what encoding/json writes for v (a pointer to
// an addressable value, or a value that is not), for what the generated
// appenders leave to it.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, out...), nil
}
