package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/internal/jsonl"
	"github.com/rackfence/rackfence/shared/wire"
)

// The audit trail: one JSON line per operator action this member carried
// out or refused (every request that is not a read, and reads that reveal
// credentials), in DATA/audit.log (mode 0600). When the file would pass
// AuditMaxBytes it becomes audit.log.1 (the previous .1 is dropped), so a
// member keeps at most twice that. Requests a follower forwards are
// recorded by the member that answered them, with Via naming the follower.
// Never a body: passwords, tokens and host specs stay out.

// DefaultAuditMaxBytes is the default size at which audit.log is rotated.
const DefaultAuditMaxBytes = 10 << 20

// MaxAuditLimit is the most records a page of GET /v1/audit holds.
const MaxAuditLimit = wire.MaxAuditPageSize

// DefaultAuditLimit is a page of GET /v1/audit asked without limit.
const DefaultAuditLimit = 100

const auditTargetKey = "rackfence.auditTarget"

// proxiedKey marks a request relayed to the leader (not recorded here).
const proxiedKey = "rackfence.proxied"

// auditable says whether a request is an operator action to record.
func auditable(c echo.Context) bool {
	switch c.Request().Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return c.Request().URL.Query().Get(wire.ParamReveal) == "true" || // credentials
			c.Path() == "/v1/cluster/snapshot" // a backup: every record, sealed
	}
	return !agentRoutine(c)
}

// agentRoutine says whether a request is an agent's heartbeat: a lease
// renewal or a status report it was granted. At 100 racks these are some
// 40 requests a second, which would push every operator action out of a
// 10 MiB trail within half an hour; the FSM keeps their effect (lease
// history, host events). Refused ones (a stale epoch, a rack not its own)
// are still recorded, and so are an agent's lease acquire and release.
func agentRoutine(c echo.Context) bool {
	if who(c).Role != wire.RoleAgent || c.Response().Status >= 400 {
		return false
	}
	switch c.Request().Method + " " + c.Path() {
	case "PUT /v1/racks/:rack/lease", "PUT /v1/hosts/:name/status", "POST /v1/racks/:rack/status":
		return true
	}
	return false
}

// setAuditTarget adds what a request created (a token's id) to its record.
func setAuditTarget(c echo.Context, t string) { c.Set(auditTargetKey, t) }

// audit records the request after it was answered.
func (s *Server) audit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := next(c); err != nil {
			c.Error(err)
		}
		if s.auditLog == nil || !auditable(c) || c.Get(proxiedKey) != nil {
			return nil
		}
		id := who(c)
		rec := wire.AuditRecord{Time: time.Now().UTC(), Member: s.store.NodeID(), Actor: id.Name, TokenID: id.ID, Role: id.Role,
			Method: c.Request().Method, Route: c.Path(), Target: auditTarget(c), Code: c.Response().Status}
		rec.Remote, _ = s.clientAddr(c.Request())
		if _, viaMember := s.clientAddr(c.Request()); viaMember {
			rec.Via = c.Request().Header.Get(ForwardedHeader)
		}
		if err := s.auditLog.Append(rec); err != nil {
			s.auditFails.failed(err, rec.Route, rec.Actor)
		} else {
			s.auditFails.succeeded()
		}
		return nil
	}
}

// auditTarget is the request's path parameters (name=r1-h07 kind=detach)
// and what the handler added.
func auditTarget(c echo.Context) string {
	var parts []string
	vals := c.ParamValues()
	for i, n := range c.ParamNames() {
		if i < len(vals) {
			parts = append(parts, n+"="+vals[i])
		}
	}
	if t, ok := c.Get(auditTargetKey).(string); ok && t != "" {
		parts = append(parts, t)
	}
	return strings.Join(parts, " ")
}

// getAudit answers this member's audit records (admin), newest first by
// page (audit_pages.go). Each member keeps its own trail: ask every member
// for the whole picture.
func (s *Server) getAudit(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	page, err := s.parseAuditPage(c)
	if err != nil {
		return err
	}
	if s.auditLog == nil {
		return errf(http.StatusServiceUnavailable, wire.CodeInternal, "this member has no audit trail (it could not open %s at start; see its log)", s.cfg.AuditFile)
	}
	recs, next, more, err := jsonl.Back[wire.AuditRecord](s.auditLog, page.from, page.limit)
	if errors.Is(err, jsonl.ErrRotatedAway) {
		s.lists.pages.WithLabelValues("expired").Inc()
		return auditExpired(s.cfg.AuditMaxBytes)
	}
	if err != nil {
		return err
	}
	if page.from.IsZero() {
		s.lists.pages.WithLabelValues("first").Inc()
	} else {
		s.lists.pages.WithLabelValues("next").Inc()
	}
	if recs == nil {
		recs = []wire.AuditRecord{}
	}
	out := wire.List[wire.AuditRecord]{Items: recs, Index: s.state.AppliedIndex()}
	if more {
		out.Continue = auditToken{Version: auditTokenVersion, Kind: auditTokenKind, Member: s.store.NodeID(), Pos: next}.encode()
	}
	return c.JSON(http.StatusOK, out)
}
