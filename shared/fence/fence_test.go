package fence

import (
	"math/rand"
	"sync"
	"testing"
	"time"
)

func TestMargin(t *testing.T) {
	cases := map[time.Duration]time.Duration{
		time.Second:      500 * time.Millisecond, // floor
		5 * time.Second:  500 * time.Millisecond, // ttl/10 = floor
		6 * time.Second:  600 * time.Millisecond,
		10 * time.Second: time.Second,
		time.Minute:      6 * time.Second,
	}
	for ttl, want := range cases {
		if got := Margin(ttl); got != want {
			t.Errorf("Margin(%s) = %s, want %s", ttl, got, want)
		}
	}
}

func TestDeadlineAndExpiry(t *testing.T) {
	sent := time.Unix(1000, 0)
	if got, want := HolderDeadline(sent, 10*time.Second), sent.Add(9*time.Second); !got.Equal(want) {
		t.Errorf("HolderDeadline = %s, want %s", got, want)
	}
	if got := ExpiryDelay(10 * time.Second); got != 11*time.Second {
		t.Errorf("ExpiryDelay(10s) = %s, want 11s", got)
	}
}

// TestFencingGap is the property the scheme rests on: the holder stops
// (sentAt + TTL − margin) at least two margins before the coordinator may
// grant the rack to someone else (appliedAt + TTL + margin), because the
// holder reads sentAt before the coordinator applies the grant. The gap is
// what covers clock-rate drift and a request delayed on its way to a BMC
// (agent/DESIGN.md, "Known limit").
func TestFencingGap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 10000; i++ {
		ttl := time.Duration(1+rng.Int63n(int64(2*time.Minute))) + time.Second
		sent := time.Unix(0, rng.Int63())
		applied := sent.Add(time.Duration(rng.Int63n(int64(ttl)))) // the grant is applied after it was asked for
		stop := HolderDeadline(sent, ttl)
		other := applied.Add(ExpiryDelay(ttl))
		if gap := other.Sub(stop); gap < 2*Margin(ttl) {
			t.Fatalf("ttl %s: the holder stops %s before another may be granted, want at least %s", ttl, gap, 2*Margin(ttl))
		}
		if !stop.After(sent) {
			t.Fatalf("ttl %s: the holder's deadline %s is not after it asked (%s)", ttl, stop, sent)
		}
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestHolderEmpty(t *testing.T) {
	h := NewHolder(nil)
	if _, ok := h.Valid(0); ok {
		t.Fatal("a new holder holds a valid lease")
	}
	if h.Context().Err() == nil {
		t.Fatal("a new holder's context is not cancelled")
	}
}

func TestHolderValidity(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	h := NewHolder(c.now)
	h.Set(Lease{Rack: "r1", Holder: "a1", Epoch: 7, TTL: 10 * time.Second, Deadline: c.now().Add(9 * time.Second)})
	if l, ok := h.Valid(4 * time.Second); !ok || l.Epoch != 7 {
		t.Fatalf("Valid(4s) right after Set = %+v, %v", l, ok)
	}
	c.add(5 * time.Second)
	if _, ok := h.Valid(4 * time.Second); ok {
		t.Fatal("valid for 4 s although the deadline is exactly 4 s away (must be strictly before)")
	}
	if _, ok := h.Valid(3 * time.Second); !ok {
		t.Fatal("not valid for 3 s with 4 s left")
	}
	c.add(5 * time.Second)
	if l, ok := h.Valid(0); ok || l.Epoch != 7 {
		t.Fatalf("past the deadline: %+v, %v (want the lease, not valid)", l, ok)
	}
	if h.Context().Err() != nil {
		t.Fatal("the context is cancelled by time alone; only Clear or a new epoch cancel it")
	}
}

func TestHolderContext(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	h := NewHolder(c.now)
	l := Lease{Rack: "r1", Holder: "a1", Epoch: 7, TTL: 10 * time.Second, Deadline: c.now().Add(9 * time.Second)}
	h.Set(l)
	ctx7 := h.Context()
	if ctx7.Err() != nil {
		t.Fatal("a fresh lease's context is cancelled")
	}
	// A renewal (same epoch) keeps the context.
	l.Deadline = l.Deadline.Add(3 * time.Second)
	h.Set(l)
	if ctx7.Err() != nil || h.Context() != ctx7 {
		t.Fatal("a renewal of the same epoch replaced or cancelled the context")
	}
	if got := h.Current().Deadline; !got.Equal(l.Deadline) {
		t.Fatalf("renewal did not move the deadline: %s", got)
	}
	// A new epoch cancels the old context.
	l.Epoch = 8
	h.Set(l)
	if ctx7.Err() == nil {
		t.Fatal("a new epoch left the old epoch's context running")
	}
	ctx8 := h.Context()
	if ctx8.Err() != nil {
		t.Fatal("the new epoch's context is cancelled")
	}
	// Clear cancels it and invalidates the lease.
	h.Clear()
	if ctx8.Err() == nil {
		t.Fatal("Clear left the context running")
	}
	if _, ok := h.Valid(0); ok {
		t.Fatal("valid after Clear")
	}
	// The same epoch set again after Clear gets a fresh context.
	h.Set(l)
	if h.Context().Err() != nil {
		t.Fatal("Set after Clear kept a cancelled context")
	}
}

func TestHolderConcurrent(t *testing.T) {
	h := NewHolder(nil)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				switch i % 4 {
				case 0:
					h.Set(Lease{Epoch: uint64(g*1000 + i), Deadline: time.Now().Add(time.Second)})
				case 1:
					h.Valid(time.Millisecond)
				case 2:
					_ = h.Context().Err()
				case 3:
					if g == 0 {
						h.Clear()
					}
				}
			}
		}(g)
	}
	wg.Wait()
}

// The mutation timeout fits in what a held lease has left between
// renewals (TTL − Margin − TTL/3), and is the documented 4.5 s at 10 s.
func TestMutationTimeoutFitsBetweenRenewals(t *testing.T) {
	if got := MutationTimeout(10 * time.Second); got != 4500*time.Millisecond {
		t.Errorf("MutationTimeout(10s) = %s, want 4.5s", got)
	}
	for _, ttl := range []time.Duration{2 * time.Second, 3 * time.Second, 10 * time.Second, time.Minute} {
		if m, left := MutationTimeout(ttl), ttl-Margin(ttl)-ttl/3; m <= 0 || m > left {
			t.Errorf("TTL %s: MutationTimeout %s, but a held lease may have only %s left", ttl, m, left)
		}
	}
}

// The one mutation-timeout default every provisioner and BMC config uses:
// 4.5 s at the default 10 s TTL, which fits in what a held lease always
// has left (TTL − Margin − TTL/3).
func TestDefaultMutationTimeout(t *testing.T) {
	if DefaultMutationTimeout != 4500*time.Millisecond {
		t.Errorf("DefaultMutationTimeout = %s, want 4.5s", DefaultMutationTimeout)
	}
	if left := DefaultTTL - Margin(DefaultTTL) - DefaultTTL/3; DefaultMutationTimeout >= left {
		t.Errorf("DefaultMutationTimeout %s does not fit the %s a default lease always has left", DefaultMutationTimeout, left)
	}
}
