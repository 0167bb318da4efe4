package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// health answers 200 while this member serves, 503 once it stopped
// applying the Raft log or while it cannot write it; all carry its
// version, command table, applied index and state hashes (the leader
// reads them: the version gate, the divergence check, members' lag).
func (s *Server) health(c echo.Context) error {
	h := s.store.Health()
	if h.Status != wire.HealthOK {
		return c.JSON(http.StatusServiceUnavailable, h)
	}
	return c.JSON(http.StatusOK, h)
}

func pathName(c echo.Context, param, field string) (string, error) {
	v := c.Param(param)
	if err := wire.ValidateName(field, v); err != nil {
		return "", err
	}
	return v, nil
}

func (s *Server) listHosts(c echo.Context) error {
	rack, pstate := c.QueryParam(wire.ParamRack), c.QueryParam(wire.ParamState)
	if rack != "" {
		if err := wire.ValidateName("rack", rack); err != nil {
			return err
		}
	}
	id := who(c)
	if id.Role == wire.RoleAgent {
		if rack == "" {
			rack = id.Rack
		}
	}
	if err := need(c, wire.RoleViewer, true, rack); err != nil {
		return err
	}
	if pstate != "" && pstate != "none" && !validState(pstate) {
		return badField("state", "%q is not a provisioning state (or none)", pstate)
	}
	sel, err := wire.ParseSelector(c.QueryParam(wire.ParamSelector))
	if err != nil {
		return badField("selector", "selector %v; use key=value, key!=value, key, !key, key in (a,b) or key notin (a,b), comma-separated", err)
	}
	q := &hostQuery{rack: rack, pstate: pstate, sel: sel}
	if q.summary, err = parseHostView(c); err != nil {
		return err
	}
	if q.page, err = parsePage(c, q.filter()); err != nil {
		return err
	}
	if q.after, err = parseAfter(c, q.page); err != nil {
		return err
	}
	return s.serveHosts(c, q)
}

func validState(st string) bool {
	for _, v := range wire.ProvisioningStates {
		if v == st {
			return true
		}
	}
	return false
}

// hostForRead loads a host after the read barrier, enforcing an agent's rack.
func (s *Server) hostForRead(c echo.Context) (wire.Host, error) {
	name, err := pathName(c, "name", "name")
	if err != nil {
		return wire.Host{}, err
	}
	if err := need(c, wire.RoleViewer, true, ""); err != nil {
		return wire.Host{}, err
	}
	if err := s.readBarrier(c); err != nil {
		return wire.Host{}, err
	}
	h, ok := s.state.Host(name)
	if !ok {
		return wire.Host{}, notFound("host %s does not exist", name)
	}
	if err := need(c, wire.RoleViewer, true, h.Rack); err != nil {
		return wire.Host{}, err
	}
	return h, nil
}

func (s *Server) getHost(c echo.Context) error {
	h, err := s.hostForRead(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h)
}

func (s *Server) events(c echo.Context) error {
	h, err := s.hostForRead(c)
	if err != nil {
		return err
	}
	return servePaged(s, c, pagedList[wire.Event]{kind: "events", key: h.Name,
		again: fmt.Sprintf("read them again from the start: run 'rackfencectl events %s' (a host keeps its last %d events: the default --chunk-size, %d, reads them in one request), or GET without continue", h.Name, fsm.MaxEvents, wire.DefaultPageSize),
		snap: func() ([]wire.Event, uint64, error) {
			evs, idx, ok := s.state.Events(h.Name)
			if !ok {
				return nil, 0, notFound("host %s does not exist", h.Name)
			}
			return evs, idx, nil
		}})
}

func (s *Server) putHost(c echo.Context) error {
	if err := need(c, wire.RoleOperator, false, ""); err != nil {
		return err
	}
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	var h wire.Host
	if err := bind(c, &h, false); err != nil {
		return err
	}
	if err := wire.ValidateHost(&h, name); err != nil {
		return err
	}
	ctx, cancel := applyCtx(c)
	defer cancel()
	if h.Handoff != nil {
		if err := s.readBarrier(c); err != nil {
			return err
		}
		if err := s.admitHandoff(ctx, &h); err != nil {
			return err
		}
	}
	v, err := s.store.Apply(ctx, fsm.PutHostCmd{Host: h, Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	r := v.(fsm.PutHostResult)
	code := http.StatusOK
	if r.Created {
		code = http.StatusCreated
	}
	return c.JSON(code, r.Host)
}

func (s *Server) deleteHost(c echo.Context) error {
	if err := need(c, wire.RoleOperator, false, ""); err != nil {
		return err
	}
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	var force bool
	switch v := c.QueryParam(wire.ParamForce); v {
	case "", "false":
	case "true":
		force = true
	default:
		return badField(wire.ParamForce, "%q is not true or false", v)
	}
	cmd := fsm.DeleteHostCmd{Name: name, Force: force}
	if h, ok := s.state.Host(name); ok && fsm.TaskFences(&h) {
		// The fence is decided inside Apply (a body version every voter
		// must apply); a host with no BMC task in sight is deleted with
		// the body older members apply too.
		cmd.TaskFence, cmd.Time = true, time.Now().UTC()
	}
	v, err := s.apply(c, cmd)
	if err != nil {
		return err
	}
	r := v.(fsm.DeleteHostResult)
	if cmd.TaskFence && force {
		s.log.Warn("host deletion forced while a BMC task runs", "host", name, "task", r.Host.Task)
	}
	if r.Deleted {
		return c.JSON(http.StatusOK, r.Host)
	}
	return c.JSON(http.StatusAccepted, r.Host)
}

func intentKind(c echo.Context) (string, error) {
	k := c.Param("kind")
	switch k {
	case wire.IntentDetach, wire.IntentDrain, wire.IntentResume, wire.IntentReboot, wire.IntentInspect, wire.IntentService:
		return k, nil
	}
	return "", badField("kind", "%q is not an intent: use detach, drain, resume, reboot, inspect or service", k)
}

// intentTarget checks the operator role and reads the host name and intent
// kind of an intent path.
func intentTarget(c echo.Context) (name, kind string, err error) {
	if err = need(c, wire.RoleOperator, false, ""); err != nil {
		return "", "", err
	}
	if name, err = pathName(c, "name", "name"); err != nil {
		return "", "", err
	}
	kind, err = intentKind(c)
	return name, kind, err
}

func (s *Server) postIntent(c echo.Context) error {
	name, kind, err := intentTarget(c)
	if err != nil {
		return err
	}
	switch kind {
	case wire.IntentReboot:
		return s.postReboot(c, name)
	case wire.IntentInspect:
		return s.postInspect(c, name)
	case wire.IntentService:
		return s.postService(c, name)
	}
	var req wire.IntentRequest
	if err := bind(c, &req, true); err != nil {
		return err
	}
	if err := wire.ValidateIntent(kind, &req); err != nil {
		return err
	}
	in := wire.Intent{Reason: req.Reason, Actor: actor(c), Mode: req.Mode, Force: req.Force, Wipe: req.Wipe}
	v, err := s.apply(c, fsm.PutIntentCmd{Name: name, Kind: kind, Intent: in, Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v.(wire.Intent))
}

func (s *Server) deleteIntent(c echo.Context) error {
	name, kind, err := intentTarget(c)
	if err != nil {
		return err
	}
	if kind == wire.IntentResume {
		return badField("kind", "resume is one-shot and cannot be withdrawn; the agent drops it once handled")
	}
	if kind == wire.IntentReboot || kind == wire.IntentInspect || kind == wire.IntentService {
		return s.deleteOperationIntent(c, name, kind, "")
	}
	v, err := s.apply(c, fsm.DeleteIntentCmd{Name: name, Kind: kind})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v.(wire.Host))
}
