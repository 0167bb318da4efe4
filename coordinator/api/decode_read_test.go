package api

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAllSized: the body reads whole whatever the declared length
// says (none, exact, shorter, longer than the body), in one allocation
// when the length is exact, and a read error is returned.
func TestReadAllSized(t *testing.T) {
	body := strings.Repeat("x", 70_000)
	for _, n := range []int64{-1, 0, 70_000, 10, 200_000, 2 << 20} {
		for _, half := range []bool{false, true} {
			var r io.Reader = strings.NewReader(body)
			if half {
				r = iotest.HalfReader(r)
			}
			b, err := readAllSized(r, n, 1<<20)
			if err != nil || string(b) != body {
				t.Fatalf("declared %d (half reads %v): %d bytes, err %v", n, half, len(b), err)
			}
		}
	}
	raw := []byte(body)
	if a := testing.AllocsPerRun(20, func() {
		if _, err := readAllSized(bytes.NewReader(raw), int64(len(raw)), 1<<20); err != nil {
			t.Fatal(err)
		}
	}); a > 2 { // the buffer (and the bytes.Reader)
		t.Errorf("exact length: %.0f allocations per read, want at most 2", a)
	}
	boom := errors.New("boom")
	if _, err := readAllSized(iotest.ErrReader(boom), 10, 1<<20); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
}

func BenchmarkReadBody(b *testing.B) {
	body := []byte(strings.Repeat("x", 112_000)) // a rack report of 100 hosts
	b.Run("declared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			readAllSized(bytes.NewReader(body), int64(len(body)), MaxRackStatusBody)
		}
	})
	b.Run("readall", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			io.ReadAll(bytes.NewReader(body))
		}
	})
}
