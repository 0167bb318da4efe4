package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// oddStrings need escaping, or are what an escaper gets wrong: quotes,
// backslashes, control bytes, HTML's <>&, U+2028/2029, invalid UTF-8,
// multi-byte runes, and the empty string.
var oddStrings = []string{
	"", "plain", `say "hi" \ back`, "<script>&amp;</script>", "line\u2028para\u2029", "\x00\x01\x1f\x7f",
	"bad \xff\xfe utf8 \xc3", "é漢字🙂", "\t\n\r\b\f", "trunc\xe2\x80", "=,!()", "{\"json\":true}",
}

// oddTimes: zero, nanoseconds, other zones, a monotonic reading, a zero
// instant with a zone, and the year range's ends.
var oddTimes = func() []time.Time {
	z := time.FixedZone("odd", -(3*3600 + 30*60))
	return []time.Time{{}, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 100, z),
		time.Date(2026, 6, 1, 0, 0, 0, 1000, time.FixedZone("east", 14*3600)), time.Now(),
		time.Time{}.In(z), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}
}()

// filler sets values by reflection: full sets every pointer, slice and
// map (each optional part present), else each is left nil, empty or set
// at random.
type filler struct {
	r    *rand.Rand
	full bool
	odd  string // when set, some strings are it
}

func (f *filler) str() string {
	if f.odd != "" && f.r.IntN(3) == 0 {
		return f.odd
	}
	s := oddStrings[f.r.IntN(len(oddStrings))]
	if f.full && s == "" {
		s = "x"
	}
	return s
}

func (f *filler) fill(v reflect.Value, depth int) {
	if v.Type() == timeType {
		v.Set(reflect.ValueOf(oddTimes[f.r.IntN(len(oddTimes))]))
		if f.full && v.Interface().(time.Time).IsZero() {
			v.Set(reflect.ValueOf(oddTimes[1]))
		}
		return
	}
	some := func() bool { return f.full || f.r.IntN(3) != 0 }
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.full || f.r.IntN(2) == 0)
	case reflect.String:
		v.SetString(f.str())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := []int64{0, 1, -1, 42, 1 << 40, -(1 << 62)}[f.r.IntN(6)]
		if f.full && n == 0 {
			n = 7
		}
		if v.OverflowInt(n) {
			n = 7
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n := []uint64{0, 1, 42, 1 << 63}[f.r.IntN(4)]
		if f.full && n == 0 || v.OverflowUint(n) {
			n = 7
		}
		v.SetUint(n)
	case reflect.Pointer:
		if depth < 8 && some() {
			p := reflect.New(v.Type().Elem())
			f.fill(p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		switch {
		case f.full:
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		case f.r.IntN(3) == 0:
			return // nil
		default:
			v.Set(reflect.MakeSlice(v.Type(), f.r.IntN(3), 3)) // empty too
		}
		for i := range v.Len() {
			f.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		if !f.full && f.r.IntN(3) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		n := f.r.IntN(4)
		if f.full {
			n = 3
		}
		for range n {
			k := reflect.New(v.Type().Key()).Elem()
			f.fill(k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			f.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}

// encodingJSON is what json.Encoder (HTML escaping on, as the list used
// it) writes for v, without the newline.
func encodingJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// sameAsEncodingJSON fails t when the generated appenders write other
// bytes than encoding/json for h or its summary, or fail differently.
func sameAsEncodingJSON(t *testing.T, what string, h *wire.Host) {
	t.Helper()
	want, werr := encodingJSON(h)
	got, gerr := appendHostJSON(nil, h)
	if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("%s: the host's JSON differs from encoding/json's (errors %v, %v) %s", what, gerr, werr, firstDiff(got, want))
	}
	var s wire.HostSummary
	var st wire.HostStatusSummary
	wire.Summarize(h, &s, &st)
	want, werr = encodingJSON(&s)
	got, gerr = appendHostSummaryJSON(nil, &s)
	if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("%s: the summary's JSON differs from encoding/json's (errors %v, %v) %s", what, gerr, werr, firstDiff(got, want))
	}
}

// firstDiff shows where have and want part, with some bytes before.
func firstDiff(have, want []byte) string {
	i := 0
	for i < len(have) && i < len(want) && have[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d:\n have: …%s\n want: …%s", i, have[from:min(len(have), i+40)], want[from:min(len(want), i+40)])
}

// TestHostJSONSameBytes: the generated appenders write encoding/json's
// bytes for the zero host, fleet-shaped hosts, hosts with every optional
// part set, and hosts with parts left out, nil or empty at random, with
// strings that need escaping and times in other zones.
func TestHostJSONSameBytes(t *testing.T) {
	sameAsEncodingJSON(t, "zero host", &wire.Host{})
	sameAsEncodingJSON(t, "zero status", &wire.Host{Status: &wire.HostStatus{}, Intents: &wire.Intents{}, Handoff: &wire.Handoff{}})
	v := benchFleet(t, 20).HostsView("")
	for i := range v.Len() {
		h := v.At(i)
		sameAsEncodingJSON(t, "fleet host "+h.Name, &h)
	}
	for seed := range uint64(300) {
		f := &filler{r: rand.New(rand.NewPCG(seed, 1)), full: seed < 20}
		var h wire.Host
		f.fill(reflect.ValueOf(&h).Elem(), 0)
		sameAsEncodingJSON(t, fmt.Sprintf("filled host (seed %d, every part %v)", seed, f.full), &h)
	}
}

// TestHostJSONEveryField: a host with every optional part set writes
// every field its type has (so the comparison above covers them all).
func TestHostJSONEveryField(t *testing.T) {
	f := &filler{r: rand.New(rand.NewPCG(1, 1)), full: true}
	var h wire.Host
	f.fill(reflect.ValueOf(&h).Elem(), 0)
	out, err := appendHostJSON(nil, &h)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	fs, _ := genJSONFields(reflect.TypeFor[wire.Host]())
	for _, fl := range fs {
		if _, ok := doc[fl.name]; !ok {
			t.Errorf("a host with every part set has no %q", fl.name)
		}
	}
}

// FuzzHostJSON compares the generated appenders with encoding/json for
// hosts filled from the fuzzer's seed, with its string in some fields.
//
//	go test -run '^$' -fuzz FuzzHostJSON -fuzztime 60s ./coordinator/api/
func FuzzHostJSON(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(uint64(len(s)), false, s)
	}
	f.Add(uint64(7), true, "\u2029<>")
	f.Fuzz(func(t *testing.T, seed uint64, full bool, odd string) {
		fl := &filler{r: rand.New(rand.NewPCG(seed, 2)), full: full, odd: odd}
		var h wire.Host
		fl.fill(reflect.ValueOf(&h).Elem(), 0)
		sameAsEncodingJSON(t, "fuzzed host", &h)
	})
}

// TestJSONStringEveryByteEveryPlace puts each byte value, and the
// characters encoding/json treats apart (U+2028, U+2029, multi-byte
// runes, invalid UTF-8), at every place of plain strings 1 to 24 bytes
// long; every result must be encoding/json's bytes (what FuzzHostJSON
// finds by chance, every case here: a faster appendJSONString, one that
// reads words rather than bytes, must pass it; one was tried and was no
// faster on hosts' short strings).
func TestJSONStringEveryByteEveryPlace(t *testing.T) {
	var odd []string
	for c := 0; c < 256; c++ {
		odd = append(odd, string([]byte{byte(c)}))
	}
	odd = append(odd, "\u2028", "\u2029", "é", "漢", "🙂", "\xe2\x80", "\xc3")
	want := func(s string) string {
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(s); err != nil {
			t.Fatal(err)
		}
		return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	plain := "abcdefghijklmnopqrstuvwx"
	for n := 1; n <= len(plain); n++ {
		for at := 0; at < n; at++ {
			for _, o := range odd {
				s := plain[:at] + o + plain[at+1:n]
				if got, w := string(appendJSONString(nil, s)), want(s); got != w {
					t.Fatalf("appendJSONString(%q) = %s, encoding/json writes %s", s, got, w)
				}
			}
		}
	}
}
