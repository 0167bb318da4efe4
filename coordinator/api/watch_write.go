package api

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// watchWriter writes one watcher's answers (a long poll's one, a
// stream's lines), each within Config.WatchWriteTimeout of progress and in
// one of the hub's write lanes. Its two timers are made once per watcher
// and reset per write: a stream's line costs no timer, and no write
// deadline is sent to the HTTP/2 connection's loop unless the watcher
// stalls (then the deadline is set in the past, which cuts the stream at
// once).
type watchWriter struct {
	s  *Server
	c  echo.Context
	w  *echo.Response
	rc *http.ResponseController

	conn string // the connection (its remote address): the lane's key

	mu    sync.Mutex
	armed bool // a write is under way
	fired bool // the cut timer set the write deadline
	cutT  *time.Timer
	lane  *connLane // held
	slot  bool      // a line slot held (watch_first.go)
	laneT *time.Timer
}

func (s *Server) newWatchWriter(c echo.Context) *watchWriter {
	ww := &watchWriter{s: s, c: c, w: c.Response(), rc: http.NewResponseController(c.Response()), conn: c.Request().RemoteAddr}
	ww.cutT = time.AfterFunc(time.Hour, ww.cut)
	ww.cutT.Stop()
	ww.laneT = time.AfterFunc(time.Hour, ww.leaveLane)
	ww.laneT.Stop()
	return ww
}

// stop releases the timers.
func (ww *watchWriter) stop() {
	ww.cutT.Stop()
	ww.laneT.Stop()
	ww.leaveLane()
}

// cut ends a write that took no part of a chunk within WatchWriteTimeout:
// a write deadline in the past fails it (and, over HTTP/2, resets the
// stream).
func (ww *watchWriter) cut() {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	if ww.armed {
		ww.fired = ww.rc.SetWriteDeadline(time.Now().Add(-time.Second)) == nil
	}
}

// leaveLane leaves the write lane and gives back the line's slot (once
// per lane entered, per slot taken).
func (ww *watchWriter) leaveLane() {
	ww.mu.Lock()
	l, slot := ww.lane, ww.slot
	ww.lane, ww.slot = nil, false
	ww.mu.Unlock()
	if slot {
		ww.s.watches.first.lineDone()
	}
	if l != nil {
		ww.s.watches.exitLane(ww.conn, l)
	}
}

// writeAnswer writes a long poll's answer: headers, then body.
func (s *Server) writeWatchAnswer(c echo.Context, body []byte) error {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	w.Header().Set(echo.HeaderContentLength, strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	ww := s.newWatchWriter(c)
	defer ww.stop()
	_ = ww.write(body) // an answer not taken is gone: nothing else can be written
	return nil
}

// write writes body (headers already written) in chunks of watchChunk,
// in its connection's write lane and one of the line slots, both held at
// most laneHold from its turn (watch_first.go: no write in flight), and
// counts and logs a watcher cut off.
func (ww *watchWriter) write(body []byte) error {
	h := ww.s.watches
	ctx := ww.c.Request().Context()
	l, err := h.enterLane(ctx, ww.conn)
	if err != nil {
		return err
	}
	ww.mu.Lock()
	ww.lane = l
	ww.mu.Unlock()
	if err := h.first.lineTurn(ctx); err != nil {
		ww.leaveLane()
		return err
	}
	ww.mu.Lock()
	ww.slot, ww.armed = true, true
	ww.mu.Unlock()
	ww.laneT.Reset(laneHold)
	for off := 0; off < len(body) && err == nil; off += watchChunk {
		ww.cutT.Reset(ww.s.cfg.WatchWriteTimeout)
		if _, err = ww.w.Write(body[off:min(off+watchChunk, len(body))]); err == nil {
			err = ww.rc.Flush()
		}
	}
	ww.cutT.Stop()
	ww.laneT.Stop()
	ww.leaveLane()
	ww.mu.Lock()
	ww.armed = false
	if ww.fired {
		ww.fired = false
		_ = ww.rc.SetWriteDeadline(time.Time{})
	}
	ww.mu.Unlock()
	h.shared.Inc()
	if err != nil {
		h.cut.Inc()
		ww.s.log.Info("watch answer not taken in time: the watcher was cut off", "remote", ww.c.RealIP(), "bytes", len(body), "err", err)
	}
	return err
}
