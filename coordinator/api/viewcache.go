package api

import (
	"sync"
	"time"
)

// viewCache keeps what recent paged lists answer their later pages from
// (a host-list view, another list's first-page items), keyed by list and
// index, within ListViewMaxAge, ListViewLinger and MaxListViews. The host
// list and the other lists share it (listviews.go, list_paged.go).
type viewCache[K comparable, V any] struct {
	mu  sync.Mutex
	m   map[K]*cachedView[V]
	now func() time.Time
	// sweep: while values are kept, they are expired every sweepEvery
	// even when no list is asked (the records a view holds would stay
	// otherwise until the next list); nil when nothing is kept.
	sweep      *time.Timer
	sweepEvery time.Duration
}

type cachedView[V any] struct {
	v    V
	used time.Time
	// born: when the value was taken (or last served a list's first
	// page): it goes ListViewMaxAge after, however often it is read.
	born time.Time
	// done: the last page served from it was a list's last.
	done bool
}

func newViewCache[K comparable, V any]() *viewCache[K, V] {
	return &viewCache[K, V]{m: map[K]*cachedView[V]{}, now: time.Now, sweepEvery: ListViewLinger}
}

// armSweep starts the sweep when values are kept and none runs; the
// caller holds c.mu.
func (c *viewCache[K, V]) armSweep() {
	if c.sweep == nil && len(c.m) > 0 {
		c.sweep = time.AfterFunc(c.sweepEvery, c.sweepNow)
	}
}

// sweepNow expires what is due, and sweeps again later while anything
// is left.
func (c *viewCache[K, V]) sweepNow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	c.sweep = nil
	c.armSweep()
}

// get returns the value kept under k and marks it in use.
func (c *viewCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	e := c.m[k]
	if e == nil {
		var zero V
		return zero, false
	}
	e.used, e.done = c.now(), false
	return e.v, true
}

// put keeps v under k; past MaxListViews the least recently used goes.
func (c *viewCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	now := c.now()
	c.m[k] = &cachedView[V]{v: v, used: now, born: now}
	for len(c.m) > MaxListViews {
		var oldest K
		var at time.Time
		for k, e := range c.m {
			if at.IsZero() || e.used.Before(at) {
				oldest, at = k, e.used
			}
		}
		delete(c.m, oldest)
	}
	c.armSweep()
}

// finished records that a list's last page was served from k's value.
func (c *viewCache[K, V]) finished(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[k]; e != nil {
		e.done = true
	}
}

// expire drops values taken more than ListViewMaxAge ago, or unused for
// ListViewLinger after a list's last page; the caller holds c.mu.
func (c *viewCache[K, V]) expire() {
	now := c.now()
	old, linger := now.Add(-ListViewMaxAge), now.Add(-ListViewLinger)
	for k, e := range c.m {
		if e.born.Before(old) || e.done && e.used.Before(linger) {
			delete(c.m, k)
		}
	}
}
