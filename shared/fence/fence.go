// Package fence holds the lease arithmetic both sides of the fencing scheme
// share: the coordinator grants a rack to a new holder only after the old
// lease's TTL plus Margin; the holder stops mutating at TTL minus Margin,
// measured on its monotonic clock from before it sent the request.
package fence

import (
	"context"
	"sync"
	"time"
)

// Margin is the safety margin on each side of a lease of the given TTL:
// a tenth of it, at least 500ms. It covers clock-rate drift between the
// agent and the coordinator and scheduling delays.
func Margin(ttl time.Duration) time.Duration {
	m := ttl / 10
	if m < 500*time.Millisecond {
		m = 500 * time.Millisecond
	}
	return m
}

// MutationTimeout is the longest one guarded call may take under a lease
// of the given TTL: half of TTL minus Margin. Renewals run every TTL/3, so
// a held lease always has at least TTL − Margin − TTL/3 left, and this
// fits in it (4.5 s at the default 10 s TTL; agent/DESIGN.md).
func MutationTimeout(ttl time.Duration) time.Duration { return (ttl - Margin(ttl)) / 2 }

// DefaultTTL is the lease TTL an agent asks for when not told otherwise
// (rackfence-agent's --lease-ttl default, and the coordinator's when a
// request names none).
const DefaultTTL = 10 * time.Second

// DefaultMutationTimeout is the one default for how long a guarded call
// may take: MutationTimeout(DefaultTTL), 4.5 s. Every provisioner and BMC
// configuration left at its zero value uses it, so none has every
// mutation refused by the guard under a default lease.
var DefaultMutationTimeout = MutationTimeout(DefaultTTL)

// HolderDeadline is when a holder must stop: sentAt is read from the
// monotonic clock before the acquire/renew request was sent.
func HolderDeadline(sentAt time.Time, ttl time.Duration) time.Time {
	return sentAt.Add(ttl - Margin(ttl))
}

// ExpiryDelay is how long after the coordinator applied a grant or renewal
// it may declare the lease expired and grant the rack to someone else.
func ExpiryDelay(ttl time.Duration) time.Duration {
	return ttl + Margin(ttl)
}

// Lease is a lease as its holder sees it.
type Lease struct {
	Rack     string
	Holder   string
	Epoch    uint64
	TTL      time.Duration
	Deadline time.Time // monotonic; zero = no lease
}

// Holder keeps the current lease of one rack for an agent. It is safe for
// concurrent use. Context() is cancelled the moment the lease is cleared or
// replaced by one of another epoch, so in-flight calls stop with it.
type Holder struct {
	mu     sync.Mutex
	cur    Lease
	ctx    context.Context
	cancel context.CancelFunc
	now    func() time.Time
}

// NewHolder returns a Holder with no lease. now may be nil (time.Now).
func NewHolder(now func() time.Time) *Holder {
	if now == nil {
		now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return &Holder{ctx: ctx, cancel: cancel, now: now}
}

// Set installs a lease (new epoch) or extends the current one (same epoch).
func (h *Holder) Set(l Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.Epoch != h.cur.Epoch || h.ctx.Err() != nil {
		h.cancel()
		h.ctx, h.cancel = context.WithCancel(context.Background())
	}
	h.cur = l
}

// Clear drops the lease and cancels its context.
func (h *Holder) Clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cur = Lease{}
	h.cancel()
}

// Current returns the lease as stored (possibly past its deadline).
func (h *Holder) Current() Lease {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

// Valid returns the lease and true when it is held and still valid for at
// least need from now, by the monotonic clock.
func (h *Holder) Valid(need time.Duration) (Lease, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur.Epoch == 0 || h.cur.Deadline.IsZero() {
		return h.cur, false
	}
	return h.cur, h.now().Add(need).Before(h.cur.Deadline)
}

// Context is cancelled when the current lease is cleared or replaced.
func (h *Holder) Context() context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ctx
}
