package api

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// barrierTimeout bounds a linearizable read's wait for the leader's
// commit index; writeTimeout bounds a write handler's wait for its entry
// to apply.
const (
	barrierTimeout = 10 * time.Second
	writeTimeout   = 15 * time.Second
)

// readBarrier makes a read linearizable unless the caller asked for
// ?stale=true (then it answers from this member's state as it is).
func (s *Server) readBarrier(c echo.Context) error {
	if stale(c) {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), barrierTimeout)
	defer cancel()
	return s.store.ReadBarrier(ctx)
}

// applyCtx bounds a write.
func applyCtx(c echo.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request().Context(), writeTimeout)
}

// apply submits one command for the request, bounded like every write.
func (s *Server) apply(c echo.Context, cmd fsm.Command) (any, error) {
	ctx, cancel := applyCtx(c)
	defer cancel()
	return s.store.Apply(ctx, cmd)
}
