package hoststate

import "time"

// Config holds the state machine's tunables. The zero value of every field
// means its default.
type Config struct {
	// BackoffBase is the unit of the error backoff: the wait before retry n
	// is BackoffBase * 2^n minus up to half of it (default 1 minute, BMO).
	BackoffBase time.Duration
	// BackoffMaxExponent caps the exponent n (default 9: 512 minutes).
	BackoffMaxExponent int
	// TransientRetry is the wait after a transient (uncounted) failure
	// (default 15 seconds).
	TransientRetry time.Duration
	// PollInterval is the wait before asking again about an action still in
	// progress (default 10 seconds).
	PollInterval time.Duration
	// MaxDeleteTries bounds the failed power-off/deprovision attempts during
	// deletion before giving up and deleting anyway (default 3).
	MaxDeleteTries int
}
