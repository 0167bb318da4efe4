package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// apiError is an error answer: status, code, field and message.
type apiError struct {
	Status int
	Detail wire.ErrorDetail
}

func (e *apiError) Error() string { return e.Detail.Message }

// Is matches the shared/wire sentinel of the answer's code.
func (e *apiError) Is(target error) bool { return wire.MatchesCode(e.Detail.Code, target) }

func errf(status int, code, format string, a ...any) *apiError {
	return &apiError{Status: status, Detail: wire.ErrorDetail{Code: code, Message: fmt.Sprintf(format, a...)}}
}

func badField(field, format string, a ...any) *apiError {
	e := errf(http.StatusBadRequest, wire.CodeBadRequest, format, a...)
	e.Detail.Field = field
	return e
}

func forbidden(format string, a ...any) *apiError {
	return errf(http.StatusForbidden, wire.CodeForbidden, format, a...)
}

func notFound(format string, a ...any) *apiError {
	return errf(http.StatusNotFound, wire.CodeNotFound, format, a...)
}

// isStoreUnavailable reports whether err is the store saying it cannot
// take or finish the request now (no leader, busy, shutting down, outcome
// unknown, the wait ended, the leader could not write its log): toAPIError
// answers these 503, 504 or 500 with what happened, so a handler that maps
// its own errors must pass them through unchanged.
func isStoreUnavailable(err error) bool {
	for _, e := range []error{coordinator.ErrOutcomeUnknown, coordinator.ErrNotLeader, coordinator.ErrNoLeader,
		coordinator.ErrShutdown, coordinator.ErrBusy, coordinator.ErrLogWrite, context.DeadlineExceeded, context.Canceled} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// toAPIError maps any error a handler returns to an answer. Unknown errors
// become 500 "internal" with a generic message (the detail is logged).
func toAPIError(err error, log *slog.Logger, c echo.Context) *apiError {
	var ae *apiError
	var ce *fsm.Error
	var fe *wire.FieldError
	var he *echo.HTTPError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ce):
		return &apiError{Status: wire.StatusForCode(ce.Code), Detail: wire.ErrorDetail{Code: ce.Code, Message: ce.Message, Field: ce.Field}}
	case errors.As(err, &fe):
		return badField(fe.Field, "%s", fe.Message)
	case errors.Is(err, coordinator.ErrOutcomeUnknown):
		// Never 503: the client would repeat the write on another member
		// while this one may still commit (as the proxy's 504).
		return errf(http.StatusGatewayTimeout, wire.CodeInternal, "%s", outcomeUnknownMsg)
	case errors.Is(err, coordinator.ErrNotLeader), errors.Is(err, coordinator.ErrNoLeader), errors.Is(err, coordinator.ErrShutdown):
		return errf(http.StatusServiceUnavailable, wire.CodeNoLeader, "%s", noLeaderMsg)
	case errors.Is(err, coordinator.ErrBusy):
		// Not in the log, so safe to repeat (unlike ErrOutcomeUnknown).
		return errf(http.StatusServiceUnavailable, wire.CodeNoLeader, "%s", coordinator.ErrBusy.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return errf(http.StatusServiceUnavailable, wire.CodeNoLeader, "the request timed out waiting for the cluster; retry in a second")
	case errors.Is(err, coordinator.ErrLogWrite):
		// The leader failed to append the entry, so it never left the
		// leader: not applied. The leader steps down; the operator frees
		// its disk.
		log.Error("the leader could not write a client's write to its Raft log", "method", c.Request().Method, "path", c.Path(), "err", err)
		return errf(http.StatusInternalServerError, wire.CodeInternal, logWriteMsg, err)
	case errors.As(err, &he):
		switch he.Code {
		case http.StatusNotFound:
			return notFound("no such endpoint: %s %s (docs/api.md lists every endpoint of API v1)", c.Request().Method, c.Request().URL.Path)
		case http.StatusMethodNotAllowed:
			return errf(http.StatusMethodNotAllowed, wire.CodeBadRequest, "method %s is not allowed on %s", c.Request().Method, c.Request().URL.Path)
		case http.StatusRequestEntityTooLarge:
			return errf(http.StatusRequestEntityTooLarge, wire.CodeTooLarge, "request body is larger than 1 MiB")
		}
		if he.Code >= 400 && he.Code < 500 {
			return errf(he.Code, wire.CodeBadRequest, "%v", he.Message)
		}
	}
	log.Error("internal error", "method", c.Request().Method, "path", c.Path(), "err", err)
	return errf(http.StatusInternalServerError, wire.CodeInternal, "internal error; the coordinator's log has the details")
}

const outcomeUnknownMsg = "the write was submitted to the cluster, but leadership moved (or the wait ended) before it was known to be applied: it may have been applied; read the resource before repeating it"

const logWriteMsg = "the leader could not write this request to its Raft log, so it was NOT applied and the leader stepped down: repeat it (another member leads within seconds). The operator must fix the leader's disk: %v"

// Why a forward to the leader ended before its answer (proxyToLeader).
var (
	errLeaderUnreachable = errors.New("no connection to the leader within the time an election takes")
	errLeaderMoved       = errors.New("this member stopped following that leader while waiting for its answer: an election is under way")
)

const noLeaderMsg = "the cluster has no leader right now (election in progress or quorum lost); retry in a second"

// errorHandler is echo's HTTPErrorHandler: every error becomes the
// contract's JSON error body; never a stack trace, never a secret.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	ae := toAPIError(err, s.log, c)
	if ae.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "1")
		if ae.Detail.Code == wire.CodeUpgradeRequired {
			// An upgrade takes minutes, not a second.
			c.Response().Header().Set("Retry-After", "30")
		}
	}
	_ = c.JSON(ae.Status, wire.ErrorBody{Error: ae.Detail})
}
