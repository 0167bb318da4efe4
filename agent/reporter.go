package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// RackStatusAPI is the per-rack status write (*client.Client has it). A
// Coordinator without it, or a coordinator that answers that it lacks the
// endpoint, gets the per-host writes of Coordinator.ReportStatus.
type RackStatusAPI interface {
	ReportRackStatus(ctx context.Context, rack string, r wire.RackStatusReport) (*wire.RackStatusResult, error)
}

// maxRackReport is the most hosts one rack status request carries (the
// coordinator takes up to 1,000).
const maxRackReport = 500

// legacyRetry is how long the agent writes per host after a coordinator
// answered that it lacks the rack endpoint, before it tries it again.
const legacyRetry = 5 * time.Minute

// statusWriteTimeout bounds one status write, per host or per rack, as
// the client bounds any request (client.DefaultTimeout).
const statusWriteTimeout = 30 * time.Second

// errNoRackStatus: the coordinator lacks POST /v1/racks/{rack}/status;
// the write goes out per host.
var errNoRackStatus = errors.New("the coordinator has no per-rack status endpoint")

// reporter sends a session's status writes as per-rack reports: every
// write queued while a report is in flight goes out in the next one (one
// request per agent per tick however many hosts changed), and every tick
// it adds a touch for each unchanged host whose refresh is due, so a
// refresh costs a host name and an index instead of its whole status.
type reporter struct {
	s    *session
	api  RackStatusAPI
	tick time.Duration
	mu   sync.Mutex
	q    []*statusWrite
	wake chan struct{}
	// legacyUntil (unix ns, agent-wide) is set when the coordinator lacks
	// the endpoint.
	legacyUntil *atomic.Int64
}

// statusWrite is one host of a report. done is nil for the reporter's own
// writes (touches, and a full status after a refused touch).
type statusWrite struct {
	h    wire.RackHostReport
	done chan statusResult
}

type statusResult struct {
	res wire.RackHostResult
	err error
}

func newReporter(s *session) *reporter {
	ra, ok := s.a.cfg.Client.(RackStatusAPI)
	if !ok || s.a.cfg.StatusPerHost {
		return nil
	}
	// The tick only adds touches (changed statuses go out at once), so
	// it follows the refresh: a quarter of it, no upper cap, so touch
	// traffic falls as the refresh grows. At the default refresh
	// (DefaultStatusRefresh, 5 min) that is one touch report per agent
	// every 75 s (100 agents: 1.3 requests/s); lastUpdated lags at most
	// refresh × 1.2 + tick.
	tick := max(s.a.cfg.StatusRefresh/4, 50*time.Millisecond)
	return &reporter{s: s, api: ra, tick: tick, wake: make(chan struct{}, 1),
		legacyUntil: &s.a.rackLegacyUntil}
}

// active reports whether writes go out per rack now.
func (r *reporter) active() bool {
	return r != nil && time.Now().UnixNano() >= r.legacyUntil.Load()
}

// write queues a full write and waits for its result: the host's result
// (with its error, if refused alone), or the error of the whole report.
func (r *reporter) write(ctx context.Context, h wire.RackHostReport) (wire.RackHostResult, error) {
	w := &statusWrite{h: h, done: make(chan statusResult, 1)}
	r.enqueue(w)
	select {
	case res := <-w.done:
		return res.res, res.err
	case <-ctx.Done():
		return wire.RackHostResult{}, context.Cause(ctx)
	}
}

func (r *reporter) enqueue(ws ...*statusWrite) {
	r.mu.Lock()
	r.q = append(r.q, ws...)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run sends reports until the session ends.
func (r *reporter) run() {
	t := time.NewTicker(r.tick)
	defer t.Stop()
	for {
		select {
		case <-r.s.ctx.Done():
			r.failAll(context.Cause(r.s.ctx))
			return
		case <-r.wake:
		case <-t.C:
			if r.active() {
				r.addTouches()
			}
		}
		for {
			batch := r.take()
			if len(batch) == 0 {
				break
			}
			r.send(batch)
		}
	}
}

// addTouches queues a touch for every host written in this session,
// unchanged since, whose refresh is due (an adopted host's first touch is
// its reconcile's: session.report).
func (r *reporter) addTouches() {
	now := time.Now()
	var ws []*statusWrite
	r.s.store.mu.Lock()
	for name, e := range r.s.store.hosts {
		if e.base != 0 && !e.touching && !e.adopted && e.written != nil && !now.Before(e.refreshAt) {
			e.touching = true
			ws = append(ws, &statusWrite{h: wire.RackHostReport{Name: name, Touch: e.base, Created: e.host.CreatedIndex}})
		}
	}
	r.s.store.mu.Unlock()
	if len(ws) > 0 {
		r.enqueue(ws...)
	}
}

// take removes up to maxRackReport writes from the queue, one per host: a
// worker's write replaces the reporter's own write of the same host.
func (r *reporter) take() []*statusWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.q) == 0 {
		return nil
	}
	at := make(map[string]int, min(len(r.q), maxRackReport))
	var out, rest []*statusWrite
	for _, w := range r.q {
		i, dup := at[w.h.Name]
		switch {
		case dup && w.done != nil && out[i].done == nil:
			r.dropOwn(out[i])
			out[i] = w
		case dup && w.done == nil:
			r.dropOwn(w)
		case dup || len(out) == maxRackReport:
			rest = append(rest, w)
		default:
			at[w.h.Name] = len(out)
			out = append(out, w)
		}
	}
	r.q = rest
	return out
}

// dropOwn forgets one of the reporter's own writes that was not sent.
func (r *reporter) dropOwn(w *statusWrite) {
	r.s.store.with(w.h.Name, func(e *hostEntry) { e.touching = false })
}

func (r *reporter) failAll(err error) {
	r.mu.Lock()
	q := r.q
	r.q = nil
	r.mu.Unlock()
	for _, w := range q {
		r.finish(w, statusResult{err: err})
	}
}

// send writes one report and hands each host its result.
func (r *reporter) send(batch []*statusWrite) {
	s := r.s
	rep := wire.RackStatusReport{Epoch: s.lease.Epoch, Hosts: make([]wire.RackHostReport, len(batch))}
	for i, w := range batch {
		rep.Hosts[i] = w.h
	}
	var res *wire.RackStatusResult
	var err error
	if _, ok := s.a.cfg.Holder.Valid(0); !ok {
		err = fmt.Errorf("%w: lease deadline passed before writing the status of %d hosts", ErrLeaseLost, len(batch))
	} else {
		ctx, cancel := context.WithTimeout(s.ctx, statusWriteTimeout)
		res, err = r.postNewer(ctx, rep)
		cancel()
	}
	m := s.a.cfg.Metrics
	switch {
	case err == nil && len(res.Hosts) != len(batch):
		err = fmt.Errorf("the coordinator answered %d results for %d hosts", len(res.Hosts), len(batch))
	case err == nil:
		m.rackReports.WithLabelValues("ok").Inc()
	case client.IsRackStatusUnsupported(err):
		m.rackReports.WithLabelValues("unsupported").Inc()
		r.legacyUntil.Store(time.Now().Add(legacyRetry).UnixNano())
		s.log.Info("the coordinator has no per-rack status endpoint; writing status per host", "retryIn", legacyRetry, "err", err.Error())
		err = errNoRackStatus
	case client.IsStaleEpoch(err):
		m.rackReports.WithLabelValues("stale").Inc()
		err = fmt.Errorf("%w: %w", ErrLeaseLost, err)
	case errors.Is(err, ErrLeaseLost):
		m.rackReports.WithLabelValues("stale").Inc()
	default:
		m.rackReports.WithLabelValues("error").Inc()
	}
	for i, w := range batch {
		if err != nil {
			r.finish(w, statusResult{err: err})
			continue
		}
		r.finish(w, statusResult{res: res.Hosts[i]})
	}
	if err != nil && errors.Is(err, ErrLeaseLost) {
		s.fenced(err)
	}
}

// finish hands a worker its result, or records the outcome of one of the
// reporter's own writes.
func (r *reporter) finish(w *statusWrite, res statusResult) {
	if w.done != nil {
		w.done <- res
		return
	}
	s := r.s
	s.a.cfg.Metrics.statusWrites.WithLabelValues(writeResult(res)).Inc()
	var again *statusWrite
	s.store.with(w.h.Name, func(e *hostEntry) {
		e.touching = false
		switch {
		case res.err != nil:
		case res.res.Error == nil:
			if !w.h.IsTouch() {
				e.base = res.res.ModifiedIndex
			}
			e.refreshAt = time.Now().Add(jitter(s.a.cfg.StatusRefresh, 0.2))
		case w.h.IsTouch() && res.res.Error.Code == wire.CodeConflict && e.base == w.h.Touch && e.written != nil:
			// The host changed since our last full write (an intent, a
			// spec change): write the full status once to get a new base.
			e.base, e.touching = 0, true
			st := *e.written
			again = &statusWrite{h: wire.RackHostReport{Name: w.h.Name, Created: e.host.CreatedIndex, Status: &st}}
		default:
			e.base = 0 // the reconcile loop writes it in full when due
		}
	})
	if again != nil {
		r.enqueue(again)
	}
	if res.err == nil && res.res.Error != nil {
		s.log.Debug("rack status report refused a host", "host", w.h.Name, "touch", w.h.IsTouch(), "code", res.res.Error.Code, "err", res.res.Error.Message)
	}
}

// writeResult is the statusWrites label of one of the reporter's own
// writes.
func writeResult(res statusResult) string {
	switch {
	case errors.Is(res.err, ErrLeaseLost):
		return "stale"
	case res.err != nil:
		return "error"
	case res.res.Error == nil:
		return "ok"
	case res.res.Error.Code == wire.CodeNotFound:
		return "gone"
	}
	return "error"
}
