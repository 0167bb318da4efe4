package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/shared/wire"
)

// A streamed watch (?stream=true) is one long answer per watcher: a line
// of JSON (the long poll's answer) per change, in order, each answering
// after the index of the line before, and a line with no changes and the
// current index when timeout passes without one (a heartbeat). The
// watcher sends one request, is authenticated and passes the read barrier
// once, and the member writes the round's shared encoding to every
// stream waiting at that index: with a crowd of watchers a change costs a
// frame per watcher instead of an answer, a new request, its
// authentication and its barrier per watcher.
//
// A stream ends (the watcher opens a new one at the last index it read)
// when this member stops leading (unless stale=true), when its token is
// revoked or expires (checked every reauthEvery), or when the watcher takes no part of a line within
// Config.WatchWriteTimeout. An error after the answer started is written
// as one last line, an ErrorBody.

// reauthEvery is how often a stream checks its token again: a revoked or
// expired token ends the stream within it (at its next line).
const reauthEvery = 5 * time.Second

// streamParam reads ?stream= (true or false; absent: false).
func streamParam(c echo.Context) (bool, error) {
	switch v := c.QueryParam(wire.ParamStream); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, badField(wire.ParamStream, "%q is not true or false", v)
	}
}

// answerWatch answers a watch of key: one long-poll answer, or a stream
// when the watcher asked for one.
func (s *Server) answerWatch(c echo.Context, key watchKey, timeout time.Duration, src watchSource) error {
	stream, err := streamParam(c)
	if err != nil {
		return err
	}
	if !stream {
		return s.sharedWatch(c, key, timeout, src)
	}
	return s.streamWatch(c, key, timeout, src)
}

// streamWatch writes key's changes to c, one line per round, until the
// watcher leaves or the stream must end.
func (s *Server) streamWatch(c echo.Context, key watchKey, timeout time.Duration, src watchSource) error {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, wire.MIMENDJSON)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := http.NewResponseController(w).Flush(); err != nil {
		return nil
	}
	s.watches.stream(key, 1)
	defer s.watches.stream(key, -1)
	ww := s.newWatchWriter(c)
	defer ww.stop()
	ctx := c.Request().Context()
	local := stale(c)
	authed := time.Now()
	own := time.NewTimer(timeout)
	defer own.Stop()
	conn := c.Request().RemoteAddr
	for {
		own.Reset(timeout)
		body, index, turn, err := s.awaitRound(ctx, conn, key, timeout, own, src)
		if ctx.Err() != nil {
			finishTurn(turn)
			return nil
		}
		if err != nil {
			s.endStream(ww, err)
			finishTurn(turn)
			return nil
		}
		s.watches.writing(key, 1)
		err = ww.write(body)
		s.watches.writing(key, -1)
		finishTurn(turn)
		if err != nil {
			return nil
		}
		key.after = max(key.after, index)
		if !local && !s.store.IsLeader() {
			s.endStream(ww, errf(http.StatusServiceUnavailable, wire.CodeNoLeader, "this member no longer leads: open the stream again at index %d", key.after))
			return nil
		}
		if time.Since(authed) < reauthEvery {
			continue
		}
		authed = time.Now()
		if _, err := s.authenticate(c); err != nil {
			s.endStream(ww, err)
			return nil
		}
	}
}

// endStream writes err as the stream's last line.
func (s *Server) endStream(ww *watchWriter, err error) {
	c := ww.c
	detail := wire.ErrorDetail{Code: wire.CodeInternal, Message: err.Error()}
	var ae *apiError
	if errors.As(err, &ae) {
		detail = ae.Detail
	}
	b, _ := json.Marshal(wire.ErrorBody{Error: detail})
	s.log.Info("watch stream ended", "remote", c.RealIP(), "code", detail.Code, "reason", detail.Message)
	_ = ww.write(append(b, '\n'))
}

func newStreamsGauge() prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rackfence_watch_streams",
		Help: "Streamed watches (stream=true) open on this member.",
	})
}
