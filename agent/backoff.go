package agent

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is THE exponential backoff with full jitter between min and max,
// used wherever the agent retries the coordinator (lease, watch, session
// churn, enrollment, a host's status write), so a coordinator outage
// never turns into a busy loop and agents that failed together do not
// retry together.
type backoff struct {
	min, max time.Duration
	n        int // attempts since the last reset
}

func newBackoff(min, max time.Duration) *backoff { return &backoff{min: min, max: max} }

// next returns the wait before the next attempt: delay(1), delay(2), …
// until reset.
func (b *backoff) next() time.Duration {
	b.n++
	return b.delay(b.n)
}

func (b *backoff) reset() { b.n = 0 }

// delay returns the wait before attempt n (n ≥ 1) for a caller that counts
// its own attempts (one count per host): a random duration in [d/2, d],
// d = min·2^(n−1) up to max.
func (b *backoff) delay(n int) time.Duration {
	d := b.min
	for i := 1; i < n && d < b.max; i++ {
		d *= 2
	}
	return jitter(min(d, b.max), 0.5)
}

// jitter returns d shortened by a random fraction of up to frac.
func jitter(d time.Duration, frac float64) time.Duration {
	return d - time.Duration(rand.Float64()*frac*float64(d))
}

// sleepCtx waits d or until ctx ends; it reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// statusWriteBackoff spaces the retries of one host's failed status write
// (the host counts its own failures): 200ms doubling to 5s.
var statusWriteBackoff = backoff{min: 200 * time.Millisecond, max: 5 * time.Second}
