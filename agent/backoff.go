package agent

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is an exponential backoff with full jitter between min and max,
// used wherever the agent retries the coordinator, so a coordinator outage
// never turns into a busy loop.
type backoff struct {
	min, max, cur time.Duration
}

func newBackoff(min, max time.Duration) *backoff { return &backoff{min: min, max: max} }

// next returns the next wait: a random duration in [cur/2, cur], cur
// doubling from min up to max.
func (b *backoff) next() time.Duration {
	if b.cur < b.min {
		b.cur = b.min
	} else {
		b.cur = min(b.cur*2, b.max)
	}
	return jitter(b.cur, 0.5)
}

func (b *backoff) reset() { b.cur = 0 }

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
