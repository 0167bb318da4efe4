package api

import (
	"context"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// watchBarrier is readBarrier for a watch, shared: the watches that arrive
// while one read barrier runs wait for the next, which starts once it
// ended (so after each of them arrived, as their own would) and answers
// them all. A crowd of watchers coming back after a change then costs the
// leader's Raft loop one leadership check, not one each.
func (s *Server) watchBarrier(c echo.Context) error {
	if stale(c) {
		return nil
	}
	return s.barrier.do(c.Request().Context(), s.store.ReadBarrier)
}

// sharedBarrier runs at most one barrier at a time and gathers the
// callers that come meanwhile into the next.
type sharedBarrier struct {
	mu   sync.Mutex
	cur  *barrierCall // running
	next *barrierCall // starts when cur ends; its callers came while cur ran
}

type barrierCall struct {
	done    chan struct{}
	err     error
	callers int // guarded by sharedBarrier.mu
}

func (b *sharedBarrier) do(ctx context.Context, fn func(context.Context) error) error {
	b.mu.Lock()
	var c *barrierCall
	start := false
	switch {
	case b.cur == nil:
		c, start = &barrierCall{done: make(chan struct{})}, true
		b.cur = c
	case b.next == nil:
		c = &barrierCall{done: make(chan struct{})}
		b.next = c
	default:
		c = b.next
	}
	c.callers++
	b.mu.Unlock()
	if start {
		go b.run(c, fn)
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run runs c, then each next gathered meanwhile, one after the other.
func (b *sharedBarrier) run(c *barrierCall, fn func(context.Context) error) {
	for c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c.err = fn(ctx)
		cancel()
		close(c.done)
		b.mu.Lock()
		c = b.next
		b.cur, b.next = c, nil
		b.mu.Unlock()
	}
}
