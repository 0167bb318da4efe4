package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// identity is who a bearer token names.
type identity struct {
	ID   string // the token's public ID
	Name string
	Role string
	Rack string // agent tokens only
}

const identityKey = "rackfence.identity"

var rank = map[string]int{wire.RoleViewer: 1, wire.RoleOperator: 2, wire.RoleAdmin: 3}

// authenticate resolves the bearer token (never logged) to an identity.
// Token text may carry a CA pin (rf1-<pin>-<secret>, shared/wire/token.go):
// only the secret is hashed and looked up.
func (s *Server) authenticate(c echo.Context) (identity, error) {
	h := c.Request().Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	tok, _ = wire.ParseToken(tok) // a pin sent along is not part of the secret
	if !ok || tok == "" {
		s.authFailures.WithLabelValues("missing").Inc()
		return identity{}, errf(http.StatusUnauthorized, wire.CodeUnauthorized, "missing bearer token: send Authorization: Bearer TOKEN (rackfencectl --token-file)")
	}
	secret, _ := wire.ParseToken(tok)
	info, ok := s.state.Token(fsm.HashToken(secret))
	if !ok {
		s.authFailures.WithLabelValues("unknown").Inc()
		return identity{}, errf(http.StatusUnauthorized, wire.CodeUnauthorized, "the bearer token is not known to this cluster (mistyped, revoked, or from another cluster); ask an admin for a new one: rackfencectl token create")
	}
	now := time.Now()
	if info.Expired(now) {
		s.authFailures.WithLabelValues("expired").Inc()
		return identity{}, errf(http.StatusUnauthorized, wire.CodeUnauthorized, "token %s (%s) expired at %s; ask an admin for a new one: rackfencectl token create --role %s%s --ttl DURATION",
			info.ID, info.Name, info.ExpiresAt.UTC().Format(time.RFC3339), info.Role, rackFlag(info.Rack))
	}
	s.store.NoteTokenUse(info.ID, now)
	return identity{ID: info.ID, Name: info.Name, Role: info.Role, Rack: info.Rack}, nil
}

func rackFlag(rack string) string {
	if rack == "" {
		return ""
	}
	return " --rack " + rack
}

// who returns the caller's identity (set by the auth middleware).
func who(c echo.Context) identity {
	id, _ := c.Get(identityKey).(identity)
	return id
}

// authMiddleware authenticates every /v1 route except health.
func (s *Server) authMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := s.authenticate(c)
		if err != nil {
			return err
		}
		if err := s.checkPeer(c, id); err != nil {
			return err
		}
		c.Set(identityKey, id)
		return next(c)
	}
}

// need checks that the caller has at least role (viewer < operator <
// admin). Agents pass only where allowAgent is set and rack (when not
// empty) is their own.
func need(c echo.Context, role string, allowAgent bool, rack string) error {
	id := who(c)
	if id.Role == wire.RoleAgent {
		if !allowAgent {
			return forbidden("an agent token may not %s %s; this needs role %s", c.Request().Method, c.Request().URL.Path, role)
		}
		if rack != "" && rack != id.Rack {
			return forbidden("this agent token is scoped to rack %s, not rack %s", id.Rack, rack)
		}
		return nil
	}
	if rank[id.Role] < rank[role] {
		return forbidden("role %s may not %s %s; this needs role %s", id.Role, c.Request().Method, c.Request().URL.Path, role)
	}
	return nil
}

// actor names the caller in intents and logs.
func actor(c echo.Context) string {
	id := who(c)
	if id.Name == "" {
		return id.Role
	}
	return id.Name
}
