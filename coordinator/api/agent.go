package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// putStatus is an agent's status report: status, intent acks, events and
// removal of one host, fenced by the rack lease epoch inside the FSM.
func (s *Server) putStatus(c echo.Context) error {
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	id := who(c)
	if id.Role != wire.RoleAgent && id.Role != wire.RoleAdmin {
		return forbidden("only an agent token (or admin) may report status; this token has role %s", id.Role)
	}
	var rep wire.StatusReport
	if err := bind(c, &rep, false); err != nil {
		return err
	}
	if err := validateReport(&rep); err != nil {
		return err
	}
	rack := id.Rack
	if id.Role == wire.RoleAdmin {
		h, ok := s.state.Host(name)
		if !ok {
			return notFound("host %s does not exist", name)
		}
		rack = h.Rack
	}
	v, err := s.apply(c, fsm.StatusCmd{Rack: rack, Name: name, Report: rep, Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	switch r := v.(type) {
	case fsm.DeleteHostResult:
		return c.JSON(http.StatusOK, r.Host)
	default:
		return c.JSON(http.StatusOK, r)
	}
}

func (s *Server) rackParam(c echo.Context, agentOK bool, role string) (string, error) {
	rack, err := pathName(c, "rack", "rack")
	if err != nil {
		return "", err
	}
	if err := need(c, role, agentOK, rack); err != nil {
		return "", err
	}
	return rack, nil
}

// leaseCall runs one lease write (acquire, renew or release) for the rack's
// agent or an admin: bind and validate the body (an acquire needs no epoch),
// build the command from it, apply it and answer the lease.
func (s *Server) leaseCall(c echo.Context, acquire bool, cmd func(rack string, req wire.LeaseRequest, now time.Time) fsm.Command) error {
	rack, err := s.rackParam(c, true, wire.RoleAdmin)
	if err != nil {
		return err
	}
	var req wire.LeaseRequest
	if err := bind(c, &req, false); err != nil {
		return err
	}
	if err := validateLease(&req, acquire); err != nil {
		return err
	}
	v, err := s.apply(c, cmd(rack, req, time.Now().UTC()))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v.(wire.Lease))
}

func (s *Server) acquireLease(c echo.Context) error {
	return s.leaseCall(c, true, func(rack string, req wire.LeaseRequest, now time.Time) fsm.Command {
		return fsm.LeaseAcquireCmd{Rack: rack, Holder: req.Holder, TTL: req.TTL.D(), Time: now}
	})
}

func (s *Server) renewLease(c echo.Context) error {
	return s.leaseCall(c, false, func(rack string, req wire.LeaseRequest, now time.Time) fsm.Command {
		return fsm.LeaseRenewCmd{Rack: rack, Holder: req.Holder, Epoch: req.Epoch, TTL: req.TTL.D(), Time: now}
	})
}

func (s *Server) releaseLease(c echo.Context) error {
	return s.leaseCall(c, false, func(rack string, req wire.LeaseRequest, now time.Time) fsm.Command {
		return fsm.LeaseReleaseCmd{Rack: rack, Holder: req.Holder, Epoch: req.Epoch, Time: now}
	})
}

func (s *Server) getLease(c echo.Context) error {
	rack, err := s.rackParam(c, true, wire.RoleViewer)
	if err != nil {
		return err
	}
	if err := s.readBarrier(c); err != nil {
		return err
	}
	l := s.state.Lease(rack)
	if l == nil {
		return notFound("rack %s has no lease", rack)
	}
	return c.JSON(http.StatusOK, l)
}

func (s *Server) leaseHistory(c echo.Context) error {
	rack, err := s.rackParam(c, true, wire.RoleViewer)
	if err != nil {
		return err
	}
	if err := s.readBarrier(c); err != nil {
		return err
	}
	return servePaged(s, c, pagedList[wire.LeaseRecord]{kind: "leases", key: rack, after: afterEpoch,
		again: fmt.Sprintf("go on after the last record read (after=EPOCH), or run 'rackfencectl rack leases %s' again (its table goes on by itself)", rack),
		snap: func() ([]wire.LeaseRecord, uint64, error) {
			recs, idx := s.state.LeaseHistory(rack)
			return recs, idx, nil
		}})
}

// watch is the long poll: it answers as soon as something about the rack
// changed after ?index=, or after the timeout with no hosts and the
// current index. Without ?rack= it watches every rack (watchFleet).
// ?status=false leaves the hosts' statuses out of a rack watch's answer
// (watch_status.go).
func (s *Server) watch(c echo.Context) error {
	rack := c.QueryParam(wire.ParamRack)
	if rack != "" || who(c).Role == wire.RoleAgent {
		if err := wire.ValidateName("rack", rack); err != nil {
			return err
		}
	}
	if err := need(c, wire.RoleViewer, true, rack); err != nil {
		return err
	}
	var after uint64
	if v := c.QueryParam(wire.ParamIndex); v != "" {
		n, err := parseUint(v)
		if err != nil {
			return badField(wire.ParamIndex, "%q is not a non-negative integer", v)
		}
		after = n
	}
	timeout := s.cfg.WatchTimeout
	if v := c.QueryParam(wire.ParamTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return badField(wire.ParamTimeout, "%q is not a positive duration like 5s", v)
		}
		if d < timeout {
			timeout = d
		}
	}
	brief, err := briefParam(c, rack)
	if err != nil {
		return err
	}
	withStatus, err := statusParam(c, rack)
	if err != nil {
		return err
	}
	if err := s.watchBarrier(c); err != nil {
		return err
	}
	if rack == "" {
		return s.watchFleet(c, after, timeout, brief)
	}
	key := watchKey{rack: rack, after: after, status: withStatus}
	return s.answerWatch(c, key, timeout, watchSource{wait: s.rackWait, answer: s.rackAnswer})
}

// rackWait waits for a change of key.rack after key.after, or timeout.
func (s *Server) rackWait(ctx context.Context, key watchKey, timeout <-chan time.Time) (bool, error) {
	return s.state.WaitChange(ctx, key.rack, key.after, key.status, timeout)
}

// rackAnswer answers a watch of key.rack after key.after as it is now,
// statuses left out unless key.status.
func (s *Server) rackAnswer(key watchKey) (any, error) {
	watch := s.state.Watch
	if !key.status {
		watch = s.state.WatchWithoutStatus
	}
	resp, err := watch(context.Background(), key.rack, key.after, passed)
	if err != nil {
		return nil, err
	}
	if !key.status {
		leaveStatusOut(&resp)
	}
	return resp, nil
}

// passed is a timeout already passed: the FSM answers at once.
var passed = func() <-chan time.Time {
	c := make(chan time.Time)
	close(c)
	return c
}()

func parseUint(s string) (uint64, error) {
	if s == "" || len(s) > 20 {
		return 0, errBadUint
	}
	var n uint64
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return 0, errBadUint
		}
		d := uint64(ch - '0')
		if n > (^uint64(0)-d)/10 {
			return 0, errBadUint
		}
		n = n*10 + d
	}
	return n, nil
}

var errBadUint = fe("index", "not a number")
