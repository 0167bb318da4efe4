package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/fence"
)

// ErrFenced is returned by Guard.Do when the caller may not mutate: the rack
// lease is missing, expired, or would expire before the call's own deadline,
// or the host is blocked (detached, drained).
var ErrFenced = errors.New("fenced")

// AuditRecord is one guarded call, written whether it ran or was refused.
type AuditRecord struct {
	Host    string    `json:"host"`
	Op      string    `json:"op"`
	Epoch   uint64    `json:"epoch"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Outcome string    `json:"outcome"` // ok, error: …, refused: …
}

// Auditor receives audit records. It must not block for long.
type Auditor interface {
	Audit(AuditRecord)
}

// Guard is the one path to every mutating call on a BMC or a provisioner
// (power, boot device, virtual media, BMC reset, every mutating Ironic call;
// agent/bmc and the provisioners take a *Guard for each).
// Right before the call it checks that the rack lease is valid, by the
// agent's monotonic clock, for at least the call's own timeout; it bounds
// the call by both, and cancels it when the lease is lost.
type Guard struct {
	lease *fence.Holder
	audit Auditor
	now   func() time.Time

	mu       sync.Mutex
	cond     *sync.Cond
	blocked  map[string]bool
	inflight map[string]int
}

// NewGuard returns a guard over the lease holder; audit may be nil.
func NewGuard(lease *fence.Holder, audit Auditor) *Guard {
	g := &Guard{lease: lease, audit: audit, now: time.Now,
		blocked: map[string]bool{}, inflight: map[string]int{}}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Do runs fn as the mutating operation op on host, bounded by timeout, if and
// only if the lease is valid for the whole timeout and the host is not
// blocked. It returns an error wrapping ErrFenced when it refuses.
func (g *Guard) Do(ctx context.Context, host, op string, timeout time.Duration, fn func(ctx context.Context) error) error {
	if g == nil || g.lease == nil {
		return fmt.Errorf("%w: %s %s: no guard given; every mutating call needs the agent's Guard", ErrFenced, op, host)
	}
	start := g.now()
	g.mu.Lock()
	l, ok := g.lease.Valid(timeout)
	var refuse string
	switch {
	case g.blocked[host]:
		refuse = "host is blocked (detached or drained)"
	case !ok && l.Epoch == 0:
		refuse = "no rack lease held"
	case !ok:
		refuse = fmt.Sprintf("rack lease (epoch %d) would expire before this call's %s deadline", l.Epoch, timeout)
	}
	if refuse != "" {
		g.mu.Unlock()
		g.record(AuditRecord{Host: host, Op: op, Epoch: l.Epoch, Start: start, End: g.now(), Outcome: "refused: " + refuse})
		return fmt.Errorf("%w: %s %s: %s", ErrFenced, op, host, refuse)
	}
	g.inflight[host]++
	g.mu.Unlock()

	lctx := g.lease.Context()
	cctx, cancel := context.WithDeadline(WithEpoch(ctx, l.Epoch), minTime(start.Add(timeout), l.Deadline))
	stop := context.AfterFunc(lctx, cancel)
	err := fn(cctx)
	stop()
	cancel()
	if err != nil && lctx.Err() != nil && !errors.Is(err, ErrFenced) {
		// The lease was cleared or replaced while the call ran: the call
		// was cancelled, and the caller must treat it as fenced.
		err = fmt.Errorf("%w: %s %s: lease (epoch %d) lost during the call: %w", ErrFenced, op, host, l.Epoch, err)
	}

	g.mu.Lock()
	g.inflight[host]--
	if g.inflight[host] == 0 {
		delete(g.inflight, host)
		g.cond.Broadcast()
	}
	g.mu.Unlock()

	outcome := "ok"
	if err != nil {
		outcome = "error: " + err.Error()
	}
	g.record(AuditRecord{Host: host, Op: op, Epoch: l.Epoch, Start: start, End: g.now(), Outcome: outcome})
	return err
}

// Block refuses every further mutation for host and returns once the last
// in-flight one has finished. A detach is acknowledged only after Block
// returned.
func (g *Guard) Block(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.blocked[host] = true
	for g.inflight[host] > 0 {
		g.cond.Wait()
	}
}

// Unblock lets mutations for host through again.
func (g *Guard) Unblock(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.blocked, host)
}

// Blocked reports whether host is blocked.
func (g *Guard) Blocked(host string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.blocked[host]
}

func (g *Guard) record(r AuditRecord) {
	if g.audit != nil {
		g.audit.Audit(r)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
