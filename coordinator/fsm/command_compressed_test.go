package fsm

import (
	"bytes"
	"compress/flate"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// deflated builds a CmdCompressed entry by hand: version v, declared
// length n, the raw DEFLATE stream of body.
func deflated(t testing.TB, v byte, n int, body []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{byte(CmdCompressed), v})
	b.Write(binary.AppendUvarint(nil, uint64(n)))
	w, _ := flate.NewWriter(&b, flate.BestSpeed)
	w.Write(body)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCompressedEntriesApplyAsPlain: a fleet registered through compressed
// entries reads, hashes and restores exactly as one registered through
// plain entries, and its rack reports did shrink.
func TestCompressedEntriesApplyAsPlain(t *testing.T) {
	plain := reads(t, fleetFSM(t, 300, 100))
	var n, in, out int
	packed := packedFleetFSM(t, 300, 100, func(b []byte) []byte {
		c := Compress(b)
		if len(c) < len(b) {
			n, in, out = n+1, in+len(b), out+len(c)
		}
		return c
	})
	if n != 9 {
		t.Fatalf("%d entries compressed, want the 9 rack reports", n)
	}
	t.Logf("rack reports: %d bytes → %d compressed (%.1f×)", in, out, float64(in)/float64(out))
	if out*3 > in {
		t.Fatalf("rack reports compressed to %d of %d bytes: less than 3×", out, in)
	}
	got := reads(t, packed)
	if len(got) != len(plain) {
		t.Fatalf("%d reads compressed, %d plain", len(got), len(plain))
	}
	for k, want := range plain {
		if !bytes.Equal(got[k], want) {
			t.Errorf("%s through compressed entries:\n%s\nplain:\n%s", k, got[k], want)
		}
	}
}

// TestCompressedBatch: a compressed CmdBatch answers one result per
// command, as the plain batch does.
func TestCompressedBatch(t *testing.T) {
	h := newFSMT(t)
	var parts [][]byte
	for i := 0; i < 40; i++ {
		p, err := Encode(PutHostCmd{Host: host("host-with-a-long-name-"+itoa(i), "r1")})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	plain := EncodeBatch(parts)
	entry := Compress(plain)
	if CmdType(entry[0]) != CmdCompressed || len(entry) >= len(plain) {
		t.Fatalf("a %d-byte batch of host writes was not compressed (%d bytes)", len(plain), len(entry))
	}
	h.index++
	rs, ok := h.f.Apply(h.index, entry).([]Result)
	if !ok || len(rs) != 40 {
		t.Fatalf("compressed batch answered %T %v", rs, rs)
	}
	for _, r := range rs {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if _, ok := h.f.Host("host-with-a-long-name-39"); !ok {
		t.Fatal("the batch's last host is missing")
	}
	if again, err := inflate(nil, entry); err != nil || !bytes.Equal(again, plain) {
		t.Fatalf("inflate: %v, equal %v", err, bytes.Equal(again, plain))
	}
}

// TestCompressLeavesAlone: entries below CompressMin, entries that do not
// shrink and compressed entries are returned as they are.
func TestCompressLeavesAlone(t *testing.T) {
	small := bytes.Repeat([]byte{byte(CmdPutHost), 2}, CompressMin/2-1)
	noise := make([]byte, 64<<10)
	rand.Read(noise)
	noise[0] = byte(CmdBatch)
	big := append([]byte{byte(CmdBatch), 1}, bytes.Repeat([]byte("rack report "), 1000)...)
	twice := Compress(big)
	for name, b := range map[string][]byte{"small": small, "incompressible": noise, "compressed": twice} {
		if got := Compress(b); !bytes.Equal(got, b) {
			t.Errorf("%s: Compress changed a %d-byte entry into %d bytes", name, len(b), len(got))
		}
	}
	if len(twice) >= len(big)/10 {
		t.Fatalf("a repetitive entry of %d bytes compressed to %d", len(big), len(twice))
	}
}

// TestCorruptCompressedEntryIsAnErrorResult: a compressed entry that does
// not inflate to exactly what it declares fails alike on every member: an
// error result, and the FSM goes on.
func TestCorruptCompressedEntryIsAnErrorResult(t *testing.T) {
	body, _ := Encode(PutHostCmd{Host: host("h1", "r1")})
	good := deflated(t, CompressedVersion, len(body), body)
	for name, tc := range map[string]struct {
		entry []byte
		want  string
	}{
		"truncated stream":     {good[:len(good)-3], "does not end"},
		"cut in the middle":    {good[:len(good)/2], "inflating"},
		"declares more":        {deflated(t, CompressedVersion, len(body)+1, body), "inflating"},
		"declares less":        {deflated(t, CompressedVersion, len(body)-1, body), "more than"},
		"declares too much":    {deflated(t, CompressedVersion, maxInflated+1, body), "bad inflated length"},
		"holds a compressed":   {deflated(t, CompressedVersion, len(good), good), "another compressed"},
		"no length":            {[]byte{byte(CmdCompressed), CompressedVersion}, "too short"},
		"not a deflate stream": {append([]byte{byte(CmdCompressed), CompressedVersion, byte(len(body))}, 0xff, 0xff, 0xff), "compressed entry"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newFSMT(t)
			r := h.applyRaw(tc.entry)
			if r.Err == nil || errors.Is(r.Err, ErrStopped) || h.f.Stopped() != nil || !strings.Contains(r.Err.Error(), tc.want) {
				t.Fatalf("got %v (stopped %v), want an error result with %q", r.Err, h.f.Stopped(), tc.want)
			}
			if _, ok := h.f.Host("h1"); ok {
				t.Fatal("a corrupt entry was applied")
			}
			h.ok(PutHostCmd{Host: host("h2", "r1")})
		})
	}
	h := newFSMT(t)
	if r := h.applyRaw(good); r.Err != nil {
		t.Fatalf("the good entry: %v", r.Err)
	}
	if _, ok := h.f.Host("h1"); !ok {
		t.Fatal("the good entry's host is missing")
	}
}

// TestCompressedEntryAnOlderBinaryStops: a member whose binary does not
// apply compressed entries (or not this layout), or one whose inner
// command it does not know, stops at the entry instead of skipping it.
func TestCompressedEntryAnOlderBinaryStops(t *testing.T) {
	body, _ := Encode(PutHostCmd{Host: host("h1", "r1")})
	inner := EncodeBatch([][]byte{body, {201, 1, '{', '}'}})
	for name, tc := range map[string]struct {
		table map[CmdType]byte
		entry []byte
		want  string
	}{
		"binary without compressed entries": {LegacyVersions, deflated(t, CompressedVersion, len(body), body),
			"log entry 1 has command type 23 that this binary does not know"},
		"newer layout": {nil, deflated(t, CompressedVersion+1, len(body), body),
			"log entry 1 has command type 23 at body version 2, newer than this binary reads (1)"},
		"unknown command inside": {nil, deflated(t, CompressedVersion, len(inner), inner),
			"log entry 1 has command type 201 that this binary does not know"},
	} {
		t.Run(name, func(t *testing.T) {
			f := New(Options{Commands: tc.table})
			r := f.Apply(1, tc.entry).(Result)
			if !errors.Is(r.Err, ErrStopped) || !strings.Contains(r.Err.Error(), tc.want) {
				t.Fatalf("got %v, want a stop with %q", r.Err, tc.want)
			}
			if _, ok := f.Host("h1"); ok || f.AppliedIndex() != 0 {
				t.Fatal("an entry that stops the FSM was applied")
			}
		})
	}
}

// BenchmarkCompressRackReport: the leader's cost of compressing a rack
// report of 100 registered hosts, and every member's cost of inflating it.
func BenchmarkCompressRackReport(b *testing.B) {
	c := RackStatusCmd{Rack: "r000", Epoch: 1, Time: t0}
	for i := 0; i < 100; i++ {
		c.Hosts = append(c.Hosts, fleetStatus(i, 2, t0))
	}
	plain, err := Encode(c)
	if err != nil {
		b.Fatal(err)
	}
	packed := Compress(plain)
	b.Run("compress", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			Compress(plain)
		}
		b.ReportMetric(float64(len(plain))/float64(len(packed)), "ratio")
	})
	var buf []byte
	b.Run("inflate", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			out, err := inflate(buf, packed)
			if err != nil {
				b.Fatal(err)
			}
			buf = out
		}
	})
}
