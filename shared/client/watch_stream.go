package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// streamHold is how long one streamed watch request is kept open before
// FollowRack opens the next one at the last index (a bound on what one
// request holds, on the coordinator and here).
const streamHold = time.Hour

// FollowOptions shapes FollowRack.
type FollowOptions struct {
	// Heartbeat is how long the coordinator may send nothing before it
	// sends a line without changes (0: its default, 30 s). A stream that
	// stays silent for Heartbeat plus the client's Timeout is taken for
	// dead and opened again.
	Heartbeat time.Duration
	// WithoutStatus asks for status=false (see WatchWithoutStatus).
	WithoutStatus bool
}

// FollowRack follows rack from index with a streamed watch
// (GET /v1/watch?stream=true): one request whose answer carries every
// change as it happens, instead of one long poll per change. fn gets each
// answer in order, every one after the index of the one before (answers
// without changes included: they carry the current index); follow the
// same rules as for Watch's answers (Reset, Deleted). When a stream ends
// (the member stops leading, the network drops, an hour passed),
// FollowRack opens another at the last index fn was given, so fn sees
// every change. It returns when ctx ends (ctx's error), when fn returns an
// error (that error), or on an answer a retry cannot change (a bad or
// revoked token, a bad rack name: a *Error).
func (c *Client) FollowRack(ctx context.Context, rack string, index uint64, opt FollowOptions, fn func(*wire.WatchResponse) error) error {
	backoff := 100 * time.Millisecond
	for {
		got, err := c.followOnce(ctx, rack, &index, opt, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fe *fnError
		if errors.As(err, &fe) {
			return fe.err
		}
		var ae *Error
		if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 && ae.Status != http.StatusTooManyRequests {
			return err
		}
		if got {
			backoff = 100 * time.Millisecond
		}
		c.log.Debug("watch stream ended; opening another at the last index", "rack", rack, "index", index, "err", err)
		if err := sleep(ctx, backoff); err != nil {
			return err
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// fnError carries the error of FollowRack's fn out of the stream.
type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }

// followOnce reads one stream from *index, advancing it with each answer
// given to fn, and says whether any answer came.
func (c *Client) followOnce(ctx context.Context, rack string, index *uint64, opt FollowOptions, fn func(*wire.WatchResponse) error) (bool, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	silent := opt.Heartbeat
	if silent <= 0 {
		silent = 30 * time.Second
	}
	silent += c.timeout
	watchdog := time.AfterFunc(silent, func() { cancel(fmt.Errorf("watch stream of rack %s silent for %s", rack, silent)) })
	defer watchdog.Stop()
	q := url.Values{}
	q.Set(wire.ParamRack, rack)
	q.Set(wire.ParamIndex, strconv.FormatUint(*index, 10))
	q.Set(wire.ParamStream, "true")
	if opt.Heartbeat > 0 {
		q.Set(wire.ParamTimeout, opt.Heartbeat.String())
	}
	if opt.WithoutStatus {
		q.Set(wire.ParamStatus, "false")
	}
	got := false
	var stop error
	sink := func(body io.Reader) error {
		dec := json.NewDecoder(body)
		for {
			var line struct {
				wire.WatchResponse
				Error *wire.ErrorDetail `json:"error"`
			}
			if err := dec.Decode(&line); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			watchdog.Reset(silent)
			if line.Error != nil {
				stop = &Error{Status: statusOfCode(line.Error.Code), Code: line.Error.Code, Message: line.Error.Message, Method: http.MethodGet, Path: "/v1/watch"}
				return nil
			}
			// A stream opened again on another member after a failed
			// attempt starts over at the request's index: what fn has
			// seen already is skipped.
			if got && line.Index <= *index {
				continue
			}
			resp := line.WatchResponse
			if err := fn(&resp); err != nil {
				stop = &fnError{err}
				cancel(stop)
				return stop
			}
			got = true
			*index = max(*index, resp.Index)
		}
	}
	_, err := c.do(sctx, request{method: http.MethodGet, path: "/v1/watch", query: q, timeout: streamHold, sink: sink}, nil)
	if stop != nil {
		return got, stop
	}
	if err == nil {
		err = context.Cause(sctx)
	}
	return got, err
}

// statusOfCode is the HTTP status a stream's last line would have
// answered with.
func statusOfCode(code string) int {
	switch code {
	case wire.CodeUnauthorized:
		return http.StatusUnauthorized
	case wire.CodeForbidden:
		return http.StatusForbidden
	case wire.CodeBadRequest:
		return http.StatusBadRequest
	default:
		return http.StatusServiceUnavailable
	}
}
