package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

func (s *Server) putCredentials(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	var cr wire.Credentials
	if err := bind(c, &cr, false); err != nil {
		return err
	}
	if err := validateCredentials(&cr, name); err != nil {
		return err
	}
	// Sealed here, on the leader, before the Raft write: the log, the
	// snapshots and the FSM only ever hold the sealed password.
	cmd, err := s.store.SealCredentialsData(name, cr.Username, cr.Password, cr.Data)
	if err != nil {
		return err
	}
	v, err := s.apply(c, cmd)
	if err != nil {
		return err
	}
	code := http.StatusOK
	if v == true {
		code = http.StatusCreated
	}
	return c.JSON(code, wire.Credentials{Name: name, Username: cr.Username, DataKeys: cmd.DataKeys})
}

// getCredentials never returns the password, except with ?reveal=true to
// an agent whose rack has a host naming these credentials, or to an admin
// (host export --include-secrets; an admin can mint such an agent token
// anyway, so this adds no power). Every reveal is in the audit trail.
func (s *Server) getCredentials(c echo.Context) error {
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	reveal := c.QueryParam(wire.ParamReveal) == "true"
	id := who(c)
	if reveal {
		if id.Role != wire.RoleAgent && id.Role != wire.RoleAdmin {
			return forbidden("only an admin, or an agent of a rack with a host naming credentials %s, may reveal the password and data", name)
		}
	} else if err := need(c, wire.RoleViewer, true, ""); err != nil {
		return err
	}
	if err := s.readBarrier(c); err != nil {
		return err
	}
	stored, ok := s.state.Credentials(name)
	if !ok {
		return notFound("credentials %s do not exist", name)
	}
	out := wire.Credentials{Name: name, Username: stored.Username, DataKeys: stored.DataKeys}
	if reveal {
		if id.Role == wire.RoleAgent && !s.state.RackUsesCredentials(id.Rack, name) {
			return forbidden("no host of rack %s names credentials %s, so this agent may not reveal them", id.Rack, name)
		}
		pw, err := s.store.RevealPassword(name, stored)
		if err != nil {
			return err
		}
		out.Password = pw
		if out.Data, err = s.store.RevealData(name, stored); err != nil {
			return err
		}
		out.DataKeys = nil
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) listCredentials(c echo.Context) error {
	if err := need(c, wire.RoleViewer, false, ""); err != nil {
		return err
	}
	if err := s.readBarrier(c); err != nil {
		return err
	}
	return servePaged(s, c, pagedList[wire.Credentials]{kind: "credentials", after: afterName,
		again: "go on after the last record read (after=NAME), or run 'rackfencectl credentials list' again (its table goes on by itself)",
		snap: func() ([]wire.Credentials, uint64, error) {
			all, idx := s.state.AllCredentials()
			items := make([]wire.Credentials, 0, len(all))
			for _, cr := range all {
				if fsm.IsBMCAccountRecord(cr.Name) {
					continue // GET /v1/hosts/{name}/bmc-account shows these
				}
				items = append(items, wire.Credentials{Name: cr.Name, Username: cr.Username, DataKeys: cr.DataKeys})
			}
			return items, idx, nil
		}})
}

func (s *Server) status(c echo.Context) error {
	if err := need(c, wire.RoleViewer, true, ""); err != nil {
		return err
	}
	st := s.store.Status()
	st.Tier = s.cfg.Tier
	var tw []string
	st.TLS, tw = s.tlsStatus()
	st.Warnings = append(tw, st.Warnings...)
	return c.JSON(http.StatusOK, st)
}

func (s *Server) members(c echo.Context) error {
	if err := need(c, wire.RoleViewer, false, ""); err != nil {
		return err
	}
	ms, err := s.store.Members()
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.List[wire.Member]{Items: ms, Index: s.state.AppliedIndex()})
}

func (s *Server) join(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	var req wire.JoinRequest
	if err := bind(c, &req, false); err != nil {
		return err
	}
	if req.ID == "" || len(req.ID) > 253 {
		return badField("id", "is required (the joining node's --node-id), at most 253 bytes")
	}
	if _, _, err := splitHostPort(req.RaftAddr); err != nil {
		return badField("raftAddr", "%q is not host:port", req.RaftAddr)
	}
	if req.HTTPAddr == "" {
		return badField("httpAddr", "is required (the joining node's API URL)")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 30*time.Second)
	defer cancel()
	if err := s.store.Join(ctx, req); err != nil {
		return err
	}
	ms, _ := s.store.Members()
	return c.JSON(http.StatusOK, wire.List[wire.Member]{Items: ms, Index: s.state.AppliedIndex()})
}

func (s *Server) removeMember(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	id := c.Param("id")
	ctx, cancel := context.WithTimeout(c.Request().Context(), 30*time.Second)
	defer cancel()
	if err := s.store.RemoveMember(ctx, id); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"removed": id})
}
