package api

import (
	"encoding/hex"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// MaxTokenTTL is the longest ttl POST /v1/tokens accepts.
const MaxTokenTTL = 10 * 365 * 24 * time.Hour

// createToken makes a token: random on this (leader's) handler, stored
// hashed in the FSM with its creation and expiry times, returned once.
func (s *Server) createToken(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	var req wire.TokenRequest
	if err := bind(c, &req, false); err != nil {
		return err
	}
	ttl, err := validateTokenRequest(&req)
	if err != nil {
		return err
	}
	tok, hash := coordinator.NewToken()
	id := fsm.TokenID(hash)
	name := req.Name
	if name == "" {
		name = req.Role + "-" + hash[:8]
	}
	now := time.Now().UTC()
	cmd := fsm.PutTokenCmd{Hash: hash, Name: name, Role: req.Role, Rack: req.Rack, CreatedAt: now}
	if ttl > 0 {
		cmd.ExpiresAt = now.Add(ttl)
	}
	if _, err := s.apply(c, cmd); err != nil {
		return err
	}
	setAuditTarget(c, "id="+id)
	s.log.Info("token created", "id", id, "name", name, "role", req.Role, "rack", req.Rack, "expiresAt", cmd.ExpiresAt, "by", actor(c))
	return c.JSON(http.StatusCreated, wire.TokenResponse{ID: id, Token: wire.FormatToken(tok, s.cfg.CAPin), Name: name,
		Role: req.Role, Rack: req.Rack, ExpiresAt: cmd.ExpiresAt})
}

// validateTokenRequest checks a POST /v1/tokens body and returns its ttl
// (0: never expires). Every refusal names its field.
func validateTokenRequest(req *wire.TokenRequest) (time.Duration, error) {
	if !wire.ValidRole(req.Role) {
		return 0, badField("role", "%q is not a role: use viewer, operator, admin or agent", req.Role)
	}
	if req.Role == wire.RoleAgent {
		if err := wire.ValidateName("rack", req.Rack); err != nil {
			return 0, badField("rack", "is required for role agent and must be a valid rack name")
		}
	} else if req.Rack != "" {
		return 0, badField("rack", "only applies to role agent")
	}
	if req.Name != "" {
		if err := wire.ValidateName("name", req.Name); err != nil {
			return 0, err
		}
	}
	if req.TTL == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(req.TTL)
	if err != nil {
		return 0, badField("ttl", "%q is not a duration: use a Go duration such as 720h or 30m, or leave ttl out for a token that never expires", req.TTL)
	}
	if d < time.Second || d > MaxTokenTTL {
		return 0, badField("ttl", "%s is out of range: use 1s to %s, or leave ttl out for a token that never expires", d, MaxTokenTTL)
	}
	return d, nil
}

func tokenWire(t fsm.TokenInfo, now time.Time) wire.Token {
	return wire.Token{ID: t.ID, Name: t.Name, Role: t.Role, Rack: t.Rack, CreatedAt: t.CreatedAt,
		ExpiresAt: t.ExpiresAt, LastUsed: t.LastUsed, Expired: t.Expired(now)}
}

// listTokens answers every token's id, name, role, rack and times; never a
// secret or a hash.
func (s *Server) listTokens(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	if err := s.readBarrier(c); err != nil {
		return err
	}
	return servePaged(s, c, pagedList[wire.Token]{kind: "tokens", after: afterToken,
		again: "go on after the last token read (after=CREATED,ID), or run 'rackfencectl token list' again (its table goes on by itself)",
		snap: func() ([]wire.Token, uint64, error) {
			ts, idx := s.state.TokenList()
			now := time.Now()
			items := make([]wire.Token, 0, len(ts))
			for _, t := range ts {
				items = append(items, tokenWire(t, now))
			}
			return items, idx, nil
		}})
}

// revokeToken deletes a token through Raft: every member refuses it as
// soon as it applies the entry. The last valid admin token is kept (409).
func (s *Server) revokeToken(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	id := c.Param("id")
	if len(id) != fsm.TokenIDLen || !isLowerHex(id) {
		return badField("id", "%q is not a token id: use the %d hex digits 'rackfencectl token list' shows", id, fsm.TokenIDLen)
	}
	v, err := s.apply(c, fsm.RevokeTokenCmd{ID: id, Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	t := v.(fsm.TokenInfo)
	s.log.Info("token revoked", "id", id, "name", t.Name, "role", t.Role, "rack", t.Rack, "by", actor(c))
	return c.JSON(http.StatusOK, tokenWire(t, time.Now()))
}

func isLowerHex(s string) bool {
	if _, err := hex.DecodeString(s); err != nil {
		return false
	}
	for _, r := range s {
		if r >= 'A' && r <= 'F' {
			return false
		}
	}
	return true
}
