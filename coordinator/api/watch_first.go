package api

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
)

// Writes first. A write that lands while the member writes a change to
// thousands of watchers waits for the CPU behind their lines (each one
// encrypted, framed and sent, and read back by the watchers' own
// processes, often on the same machine): on 2 cores, 2,000 streamed
// watchers made write p99 8–9 times what it is without them. The member
// knows when a write is in flight, from the arrival of a mutating request
// (anything but GET, HEAD and OPTIONS) until its answer. While one is,
// watchers start no new line (the lines being written finish), and at most
// lineSlots lines are being written at any moment, so a write that
// arrives waits behind at most that many, not behind a whole pass over
// the crowd.
//
// A pause lasts at most pauseMax; a pause cut short by that bound is
// followed by at least pauseMax in which writes do not pause the lines,
// so a steady stream of writes slows the watchers down but never stops
// them. Every watcher still gets every line, later: the lines wait, none
// is dropped, and the crowd's next round takes the changes made
// meanwhile (fewer, larger lines).

const (
	// lineSlots is how many watch lines (a stream's line or a long
	// poll's answer) are written at once.
	lineSlots = 16
	// pauseMax bounds how long writes in flight hold the lines back.
	pauseMax = 50 * time.Millisecond
)

// writesFirst follows the member's writes in flight and holds the
// watchers' lines back while there are any.
type writesFirst struct {
	mu      sync.Mutex
	writes  int        // mutating requests in flight
	pause   *linePause // the pause under way; nil while lines go
	runTill time.Time  // a pause ended by max: no new one before this
	max     time.Duration

	cur   atomic.Pointer[linePause] // pause, for lines (no lock)
	slots chan struct{}             // lineSlots tokens, one per line being written

	held   prometheus.Gauge       // lines waiting for writes to end
	pauses *prometheus.CounterVec // pauses ended, by how
}

// linePause is one pause of the lines: done is closed when it ends.
type linePause struct {
	done chan struct{}
	t    *time.Timer // ends it after max
}

func newWritesFirst() *writesFirst {
	g := &writesFirst{max: pauseMax, slots: make(chan struct{}, lineSlots),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rackfence_watch_lines_held_for_writes",
			Help: "Watch lines (streamed lines and long-poll answers) ready to go out but held back while writes are in flight on this member.",
		}),
		pauses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rackfence_watch_write_pauses_total",
			Help: "Times writes in flight held the watchers' lines back, by how the pause ended: idle (no write left in flight) or bound (it lasted 50 ms; the lines then go on for at least as long).",
		}, []string{"end"}),
	}
	for _, end := range []string{"idle", "bound"} {
		g.pauses.WithLabelValues(end) // present at 0 before the first pause
	}
	return g
}

// begin notes a write arriving: the lines pause unless they are already
// paused or going on after a pause cut short by max.
func (g *writesFirst) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes++
	if g.pause != nil || time.Now().Before(g.runTill) {
		return
	}
	p := &linePause{done: make(chan struct{})}
	p.t = time.AfterFunc(g.max, func() { g.bound(p) })
	g.pause = p
	g.cur.Store(p)
}

// end notes a write answered: the last one in flight ends the pause.
func (g *writesFirst) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.writes--; g.writes == 0 && g.pause != nil {
		g.pause.t.Stop()
		g.resume("idle")
	}
}

// bound ends p after max, writes in flight or not, and lets the lines go
// on for as long before writes pause them again.
func (g *writesFirst) bound(p *linePause) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pause != p {
		return // ended already
	}
	g.runTill = time.Now().Add(g.max)
	g.resume("bound")
}

// resume ends the pause under way. The caller holds g.mu.
func (g *writesFirst) resume(end string) {
	close(g.pause.done)
	g.pause = nil
	g.cur.Store(nil)
	g.pauses.WithLabelValues(end).Inc()
}

// lineTurn waits until a line may be written: one of the lineSlots, and
// no pause (a pause that starts while it waits for a slot is waited for
// too). Lines allocate nothing here. A nil error must be followed by
// lineDone.
func (g *writesFirst) lineTurn(ctx context.Context) error {
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	for p := g.cur.Load(); p != nil; p = g.cur.Load() {
		g.held.Inc()
		select {
		case <-p.done:
			g.held.Dec()
		case <-ctx.Done():
			g.held.Dec()
			<-g.slots
			return ctx.Err()
		}
	}
	return nil
}

// lineDone gives back the slot lineTurn took.
func (g *writesFirst) lineDone() { <-g.slots }

// markWrites is the middleware that tells the watchers' lines a write is
// in flight, from its arrival until its answer.
func (s *Server) markWrites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		switch c.Request().Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		s.watches.first.begin()
		defer s.watches.first.end()
		return next(c)
	}
}
