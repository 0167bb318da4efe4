package bench

import (
	"testing"
	"time"
)

func TestSpread(t *testing.T) {
	if a, b, c := spread(nil); a != 0 || b != 0 || c != 0 {
		t.Fatalf("no latencies: %v %v %v", a, b, c)
	}
	if a, b, c := spread([]time.Duration{5}); a != 5 || b != 5 || c != 5 {
		t.Fatalf("one latency: %v %v %v", a, b, c)
	}
	lat := make([]time.Duration, 200)
	for i := range lat {
		lat[i] = time.Duration(200 - i) // descending: spread sorts
	}
	if a, b, c := spread(lat); a != 101 || b != 199 || c != 200 {
		t.Fatalf("1..200: p50 %v p99 %v max %v, want 101 199 200", a, b, c)
	}
}
