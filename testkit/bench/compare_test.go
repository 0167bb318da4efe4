package bench

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fixedTarget accepts writes at a fixed pace and records the order in
// which the comparison ran it. A stand-in for a server: what is tested is
// the interleaving and the arithmetic, not a peer.
type fixedTarget struct {
	name  string
	delay time.Duration
	log   *runLog
}

// runLog records which target ran, one entry per run of consecutive writes.
type runLog struct {
	mu    sync.Mutex
	order []string
}

func (f *fixedTarget) Name() string { return f.name }

func (f *fixedTarget) Put(ctx context.Context, _ int) error {
	f.log.mu.Lock()
	if l := f.log.order; len(l) == 0 || l[len(l)-1] != f.name {
		f.log.order = append(f.log.order, f.name)
	}
	f.log.mu.Unlock()
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
	}
	return nil
}

func TestCompareInterleavesABBA(t *testing.T) {
	log := &runLog{}
	a := &fixedTarget{name: "a", delay: 16 * time.Millisecond, log: log}
	b := &fixedTarget{name: "b", delay: 2 * time.Millisecond, log: log}
	c := Compare(context.Background(), a, b, 2, 200*time.Millisecond, 0, 4, 10)
	order := log.order
	want := []string{"a", "b", "a", "b", "a"} // a b | b a | a b | b a, runs merged
	if len(order) != len(want) {
		t.Fatalf("run order %v, want ABBA rounds %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("run order %v, want %v", order, want)
		}
	}
	if len(c.Rounds) != 4 {
		t.Fatalf("%d rounds, want 4", len(c.Rounds))
	}
	// b is about 8 times as fast as a; timer slack on a loaded machine
	// (a few ms a sleep) pulls the figure towards 1, so only the direction
	// is checked, with a margin (TestMedianRatio checks the arithmetic).
	if r := c.MedianRatio(); r < 1.5 {
		t.Fatalf("median ratio %.2f, want about 8, at least 1.5 (rounds %v)", r, c.RoundRatios())
	}
	if c.A.Writes == 0 || c.B.Writes == 0 || c.A.P50 == 0 || c.B.P99 < c.B.P50 {
		t.Fatalf("pooled results incomplete: %+v %+v", c.A, c.B)
	}
	if c.Ratio() <= 1 {
		t.Fatalf("pooled ratio %.2f, want > 1", c.Ratio())
	}
}

func TestMedianRatio(t *testing.T) {
	mk := func(a, b int) Round {
		return Round{A: Slice{Writes: a, Elapsed: time.Second}, B: Slice{Writes: b, Elapsed: time.Second}}
	}
	c := CompareResult{Rounds: []Round{mk(100, 300), mk(100, 100), mk(100, 150), mk(0, 10)}}
	// ratios 3, 1, 1.5, 0 → sorted 0 1 1.5 3 → median 1.25
	if got := c.MedianRatio(); got != 1.25 {
		t.Fatalf("median %.3f, want 1.25", got)
	}
}
