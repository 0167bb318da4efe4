package bench

import (
	"context"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Compare measures two targets under the same conditions by interleaving
// them: each round runs one slice of A and one of B, in the order ABBA
// (A first in even rounds, B first in odd ones), so a slow drift of the
// machine — on a shared VM the hypervisor's steal time swings from a few
// percent to more than half of the CPU within minutes — falls on both
// targets alike instead of on whichever ran second. Both targets stay up
// for the whole comparison; the idle one costs only its heartbeats.
//
// It returns each target's pooled result (all writes over all its slices)
// and the per-round ratios B/A, whose median is the robust figure.
func Compare(ctx context.Context, a, b Target, clients int, slice, warmup time.Duration, rounds, keys int) CompareResult {
	out := CompareResult{A: Result{Target: a.Name(), Clients: clients}, B: Result{Target: b.Name(), Clients: clients}}
	var latA, latB []time.Duration
	one := func(t Target) (Slice, []time.Duration) { return measure(ctx, t, clients, slice, warmup, keys) }
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		var sa, sb Slice
		var la, lb []time.Duration
		if r%2 == 0 {
			sa, la = one(a)
			sb, lb = one(b)
		} else {
			sb, lb = one(b)
			sa, la = one(a)
		}
		latA, latB = append(latA, la...), append(latB, lb...)
		out.A.add(sa)
		out.B.add(sb)
		out.Rounds = append(out.Rounds, Round{A: sa, B: sb})
	}
	out.A.setPercentiles(latA)
	out.B.setPercentiles(latB)
	return out
}

// Slice is one target's measured interval within a round.
type Slice struct {
	Target   string
	Writes   int
	Errors   int
	FirstErr error
	Elapsed  time.Duration
	// Steal is the fraction of CPU time the hypervisor took from this
	// machine during the slice (-1 when /proc/stat is not readable).
	Steal float64
}

// Rate is acknowledged writes per second in the slice.
func (s Slice) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Writes) / s.Elapsed.Seconds()
}

// Round is one A slice and one B slice measured back to back.
type Round struct{ A, B Slice }

// Ratio is B's rate over A's in this round (0 when A wrote nothing).
func (r Round) Ratio() float64 {
	if r.A.Rate() == 0 {
		return 0
	}
	return r.B.Rate() / r.A.Rate()
}

// CompareResult is an interleaved comparison of two targets.
type CompareResult struct {
	A, B   Result
	Rounds []Round
}

// Ratio is B's pooled rate over A's.
func (c CompareResult) Ratio() float64 {
	if c.A.Rate() == 0 {
		return 0
	}
	return c.B.Rate() / c.A.Rate()
}

// MedianRatio is the median of the per-round ratios B/A.
func (c CompareResult) MedianRatio() float64 {
	rs := c.RoundRatios()
	if len(rs) == 0 {
		return 0
	}
	sort.Float64s(rs)
	if len(rs)%2 == 1 {
		return rs[len(rs)/2]
	}
	return (rs[len(rs)/2-1] + rs[len(rs)/2]) / 2
}

// RoundRatios lists the per-round ratios B/A in round order.
func (c CompareResult) RoundRatios() []float64 {
	rs := make([]float64, len(c.Rounds))
	for i, r := range c.Rounds {
		rs[i] = r.Ratio()
	}
	return rs
}

func (r *Result) add(s Slice) {
	r.Writes += s.Writes
	r.Errors += s.Errors
	r.Elapsed += s.Elapsed
	if r.FirstErr == nil {
		r.FirstErr = s.FirstErr
	}
}

func (r *Result) setPercentiles(lats []time.Duration) {
	r.P50, r.P99, _ = spread(lats)
}

type cpuTimes struct{ total, steal, idle uint64 }

// readSteal reads the machine's aggregate CPU counters from /proc/stat
// (zero when unreadable: not Linux, or no steal column).
func readSteal() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, s := range f[1:] {
		v, _ := strconv.ParseUint(s, 10, 64)
		if i < 8 { // user nice system idle iowait irq softirq steal (guest is inside user)
			t.total += v
		}
		if i == 7 {
			t.steal = v
		}
		if i == 3 || i == 4 { // idle, iowait
			t.idle += v
		}
	}
	return t
}

func stealSince(t0 cpuTimes) float64 {
	t1 := readSteal()
	if t0.total == 0 || t1.total <= t0.total {
		return -1
	}
	return float64(t1.steal-t0.steal) / float64(t1.total-t0.total)
}
