package hoststate

import "time"

// Backoff is the wait before retrying after the errorCount-th counted error:
// base * 2^n (n = errorCount capped at c.BackoffMaxExponent) minus
// jitter * half of it. jitter is clamped to [0,1), so the wait lies in
// (base*2^n/2, base*2^n]. errorCount below 1 is treated as 1.
func Backoff(c Config, errorCount int, jitter float64) time.Duration {
	c = c.withDefaults()
	n := errorCount
	if n < 1 {
		n = 1
	}
	if n > c.BackoffMaxExponent {
		n = c.BackoffMaxExponent
	}
	if jitter < 0 || jitter != jitter { // NaN too
		jitter = 0
	}
	if jitter >= 1 {
		jitter = 0.999999
	}
	full := c.BackoffBase * time.Duration(1<<uint(n))
	return full - time.Duration(float64(full)*jitter/2)
}
