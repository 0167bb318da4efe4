package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// ForwardedHeader marks a request a follower forwarded to the leader; a
// node that receives one and does not lead answers 503 instead of
// forwarding again (no loops while leadership moves).
const ForwardedHeader = "X-Rackfence-Forwarded"

// DefaultForwardKeepAlive is the TCP keep-alive period of the connections
// a member forwards to the leader on.
const DefaultForwardKeepAlive = 30 * time.Second

// stale reports whether the caller asked for a local (possibly stale) read.
func stale(c echo.Context) bool {
	if c.Request().Method != http.MethodGet {
		return false
	}
	v := c.QueryParam(wire.ParamStale)
	return v == "true" || v == "1"
}

// forward sends writes and linearizable reads to the leader when this node
// does not lead. The leader authenticates and answers; we relay.
func (s *Server) forward(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if r := s.state.Stopped(); r != nil {
			return errf(http.StatusServiceUnavailable, wire.CodeMemberStopped,
				"this member stopped applying the Raft log (%s); ask another member", r.Message)
		}
		if s.store.IsLeader() || stale(c) {
			return next(c)
		}
		return s.proxyToLeader(c)
	}
}

// proxyToLeader relays the request to the leader's API. A leader that
// stopped answering (paused, overloaded, cut off) does not hold the
// request longer than an election takes (Config.ElectionTime): the
// connection must be ready within it, and the request ends as soon as
// this member sees that the leader it was sent to no longer leads.
func (s *Server) proxyToLeader(c echo.Context) error {
	if c.Request().Header.Get(ForwardedHeader) != "" {
		return errf(http.StatusServiceUnavailable, wire.CodeNoLeader, "%s", noLeaderMsg)
	}
	leaderID, leader := s.store.Leader()
	if leader == "" {
		return errf(http.StatusServiceUnavailable, wire.CodeNoLeader, "%s", noLeaderMsg)
	}
	u, err := url.Parse(leader)
	if err != nil {
		return errf(http.StatusServiceUnavailable, wire.CodeNoLeader, "%s", noLeaderMsg)
	}
	client, _ := s.clientAddr(c.Request())
	c.Set(proxiedKey, true) // the leader records it in its audit trail

	ctx, cancel := context.WithCancelCause(c.Request().Context())
	defer cancel(nil)
	// connected: the transport handed over a connection to the leader, so
	// some of the request may have been written to it.
	var connected atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }})
	connectBound := time.AfterFunc(s.cfg.ElectionTime, func() {
		if !connected.Load() {
			cancel(errLeaderUnreachable)
		}
	})
	defer connectBound.Stop()
	defer s.leaders.watch(leader, func() { cancel(errLeaderMoved) })()

	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = u.Host
			r.Out.Header.Set(ForwardedHeader, s.store.NodeID())
			r.Out.Header.Set(PeerHeader, formatPeer(peerOf(c)))
			r.Out.Header.Set(ClientAddrHeader, client)
		},
		Transport: s.transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			cause := context.Cause(r.Context())
			reason := forwardReason(cause)
			if reason != "error" {
				err = fmt.Errorf("%w (%s)", cause, s.cfg.ElectionTime)
			}
			sent := connected.Load()
			s.log.Warn("forwarding to the leader failed", "leader", leaderID, "url", leader, "path", r.URL.Path,
				"reason", reason, "connected", sent, "err", err)
			w.Header().Set("Content-Type", "application/json")
			if mayHaveReachedLeader(r.Method, sent, err) {
				// A 503 would make the client repeat the write on another
				// member while this copy may still reach the leader and
				// land after a newer write (chaos harness, seed 200).
				s.forwardFailures.WithLabelValues(reason, "outcome_unknown").Inc()
				w.WriteHeader(http.StatusGatewayTimeout)
				_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeInternal,
					Message: "forwarding this " + r.Method + " to the leader " + leaderID + " failed after it was sent (" + err.Error() +
						"): it may have been applied; read the resource before repeating it"}})
				return
			}
			s.forwardFailures.WithLabelValues(reason, "no_leader").Inc()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeNoLeader,
				Message: "the leader " + leaderID + " could not be reached (" + err.Error() + "); retry in a second"}})
		},
	}
	p.ServeHTTP(c.Response(), c.Request().WithContext(ctx))
	return nil
}

// localAuth authenticates requests answered by this member. A token this
// member does not know yet (it lags behind, e.g. just joined) is checked
// by the leader instead, which answers.
func (s *Server) localAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := s.authenticate(c)
		if err != nil {
			if !s.store.IsLeader() && c.Request().Header.Get(ForwardedHeader) == "" {
				if _, leader := s.store.Leader(); leader != "" {
					return s.proxyToLeader(c)
				}
				// No leader known: this member cannot tell a new token
				// from a bad one yet.
				return errf(http.StatusServiceUnavailable, wire.CodeNoLeader, "%s", noLeaderMsg)
			}
			return err
		}
		if err := s.checkPeer(c, id); err != nil {
			return err
		}
		c.Set(identityKey, id)
		return next(c)
	}
}

// mayHaveReachedLeader says whether a request whose forwarding failed
// with err may still be applied by the leader: a method other than GET
// and HEAD for which a connection to the leader was obtained (connected;
// some of the request may have been written to it) and that did not fail
// to connect.
func mayHaveReachedLeader(method string, connected bool, err error) bool {
	if method == http.MethodGet || method == http.MethodHead || !connected {
		return false
	}
	var op *net.OpError
	return !(errors.As(err, &op) && op.Op == "dial")
}

// forwardReason names why a forward ended early, from its context's
// cause: the rackfence_forward_failures_total reason label.
func forwardReason(cause error) string {
	switch {
	case errors.Is(cause, errLeaderUnreachable):
		return "connect_timeout"
	case errors.Is(cause, errLeaderMoved):
		return "leader_moved"
	}
	return "error"
}
