package api

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// getBMCAccount is GET /v1/hosts/{name}/bmc-account: the tier's BMC
// account on the host, without passwords. With ?reveal=true it adds the
// current and pending passwords, to an admin, or to the agent of the
// host's rack that holds the rack's lease now (?epoch= names it). Every
// reveal is in the audit trail (the query names it; never the answer).
func (s *Server) getBMCAccount(c echo.Context) error {
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	reveal := c.QueryParam(wire.ParamReveal) == "true"
	id := who(c)
	if err := need(c, wire.RoleViewer, true, ""); err != nil {
		return err
	}
	if reveal && id.Role != wire.RoleAgent && id.Role != wire.RoleAdmin {
		return forbidden("only an admin, or the agent holding the host's rack, may reveal the BMC account's passwords")
	}
	if err := s.readBarrier(c); err != nil {
		return err
	}
	h, ok := s.state.Host(name)
	if !ok {
		return notFound("host %s does not exist", name)
	}
	if id.Role == wire.RoleAgent && h.Rack != id.Rack {
		return forbidden("host %s is in rack %s; this agent token is scoped to rack %s", name, h.Rack, id.Rack)
	}
	if reveal && id.Role == wire.RoleAgent {
		epoch, err := strconv.ParseUint(c.QueryParam("epoch"), 10, 64)
		if err != nil || epoch == 0 {
			return badField("epoch", "is required with reveal=true for an agent: the lease epoch it holds rack %s under", h.Rack)
		}
		l := s.state.Lease(h.Rack)
		if l == nil || l.Epoch != epoch {
			cur := uint64(0)
			if l != nil {
				cur = l.Epoch
			}
			return errf(http.StatusConflict, wire.CodeStaleEpoch, "epoch %d is not rack %s's lease now (epoch %d): only the lease holder reads the BMC account's passwords",
				epoch, h.Rack, cur)
		}
	}
	stored, ok := s.state.BMCAccount(name)
	if !ok {
		return notFound("host %s has no BMC account record yet: the rack's agent creates one before its first change of the host (docs/operator.md, \"Fencing and its one limit\")", name)
	}
	out := bmcAccountView(name, stored)
	if reveal {
		if out.Password, out.PendingPassword, err = s.store.RevealBMCAccount(name, stored); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, out)
}

func bmcAccountView(host string, c fsm.StoredCredentials) wire.BMCAccount {
	out := wire.BMCAccount{Host: host, Username: c.Username, Index: c.Index}
	if b := c.BMC; b != nil {
		out.State, out.Epoch, out.PendingEpoch, out.Reason, out.RotatedAt = b.State, b.Epoch, b.PendingEpoch, b.Reason, b.RotatedAt
	}
	return out
}

// putBMCAccount is PUT /v1/hosts/{name}/bmc-account: the lease holder of
// the host's rack records a pending password (sealed here, on the leader,
// before the Raft write), confirms it, or records that the fence at the
// BMC is off. A stale epoch is refused (409 stale_epoch).
func (s *Server) putBMCAccount(c echo.Context) error {
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	id := who(c)
	if id.Role != wire.RoleAgent {
		return forbidden("only the agent holding the host's rack writes its BMC account; this token has role %s", id.Role)
	}
	var req wire.BMCAccountWrite
	if err := bind(c, &req, false); err != nil {
		return err
	}
	if err := wire.ValidateBMCAccountWrite(&req); err != nil {
		return err
	}
	cmd := fsm.BMCAccountCmd{Rack: id.Rack, Name: name, Epoch: req.Epoch, Op: req.Op, Username: req.Username,
		Reason: req.Reason, Request: req.Request, Time: time.Now().UTC()}
	if req.Op == wire.BMCAccountOpPending {
		if cmd.Sealed, err = s.store.SealBMCPassword(name, req.Password); err != nil {
			return err
		}
	}
	v, err := s.apply(c, cmd)
	if err != nil {
		return err
	}
	slog.Info("BMC account written", "host", name, "rack", id.Rack, "op", req.Op, "epoch", req.Epoch)
	return c.JSON(http.StatusOK, bmcAccountView(name, v.(fsm.StoredCredentials)))
}
