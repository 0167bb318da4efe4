package hoststate

import "time"

// Defaults of Config. The backoff constants are BMO's: retry n waits
// 2^n minutes minus up to half of it, with n capped at 9 (512 minutes).
const (
	DefaultBackoffBase        = time.Minute
	DefaultBackoffMaxExponent = 9
	DefaultTransientRetry     = 15 * time.Second
	DefaultPollInterval       = 10 * time.Second
	DefaultMaxDeleteTries     = 3
	// DefaultMaxTransientFailures is how many transient failures in a row
	// an action may have before they count as host errors, so a BMC that
	// keeps failing is not retried forever without an error.
	DefaultMaxTransientFailures = 5
	// DefaultSoftPowerOffTimeout is how long a soft power-off (graceful
	// shutdown) may take before a hard power-off follows (BMO and Ironic
	// wait the same order of time).
	DefaultSoftPowerOffTimeout = 3 * time.Minute
)

// Config holds the state machine's tunables. The zero value of every field
// means its default.
type Config struct {
	// BackoffBase is the unit of the error backoff: after the n-th counted
	// error the retry waits BackoffBase * 2^n minus up to half of it
	// (default 1 minute).
	BackoffBase time.Duration
	// BackoffMaxExponent caps the exponent n (default 9: at most 512
	// minutes with the default base).
	BackoffMaxExponent int
	// TransientRetry is the wait after a transient or fenced failure, which
	// is not counted as a host error (default 15 seconds).
	TransientRetry time.Duration
	// PollInterval is the wait before asking again about an action that is
	// still in progress (default 10 seconds).
	PollInterval time.Duration
	// MaxDeleteTries bounds the failed power-off or deprovision attempts of
	// a deletion; after that many the deletion continues anyway, with a
	// Warning event (default 3).
	MaxDeleteTries int
	// MaxTransientFailures bounds the transient failures (timeout, BMC
	// unreachable, BMC 5xx) in a row that are retried after TransientRetry
	// without counting. The MaxTransientFailures-th and every later one in
	// the same run count as errors of the failing action's type, with the
	// usual backoff; any answer that is not transient (a success, a plain
	// failure) ends the run. Fenced failures neither count nor end it
	// (default 5; negative: never count, every transient failure retried
	// after TransientRetry without end).
	MaxTransientFailures int
	// SoftPowerOffTimeout bounds a soft power-off (reboot mode soft, a
	// soft power-off hold): past it the host is powered off hard
	// (default 3 minutes; the agent's --soft-power-off-timeout).
	SoftPowerOffTimeout time.Duration
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.BackoffBase <= 0 {
		c.BackoffBase = DefaultBackoffBase
	}
	if c.BackoffMaxExponent <= 0 {
		c.BackoffMaxExponent = DefaultBackoffMaxExponent
	}
	if c.TransientRetry <= 0 {
		c.TransientRetry = DefaultTransientRetry
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.MaxDeleteTries <= 0 {
		c.MaxDeleteTries = DefaultMaxDeleteTries
	}
	if c.SoftPowerOffTimeout <= 0 {
		c.SoftPowerOffTimeout = DefaultSoftPowerOffTimeout
	}
	if c.MaxTransientFailures == 0 {
		c.MaxTransientFailures = DefaultMaxTransientFailures
	}
	return c
}
