package api

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// watchFleet answers a watch without ?rack=: the changes of every rack
// (the dashboard's live view), each held lease with the time the leader's
// expiry clock gives it. brief drops what only a host's detail view needs
// (status.hardwareDetails, bmcDetails, operationHistory and extra), about
// half of a host's size.
func (s *Server) watchFleet(c echo.Context, after uint64, timeout time.Duration, brief bool) error {
	return s.answerWatch(c, watchKey{after: after, brief: brief}, timeout, watchSource{wait: s.fleetWait, answer: s.fleetAnswer})
}

// fleetWait waits for a change of any rack after key.after, or timeout.
func (s *Server) fleetWait(ctx context.Context, key watchKey, timeout <-chan time.Time) (bool, error) {
	return s.state.WaitFleetChange(ctx, key.after, timeout)
}

// fleetAnswer answers a watch of every rack after key.after as it is
// now, brief when key.brief.
func (s *Server) fleetAnswer(key watchKey) (any, error) {
	brief := key.brief
	resp, err := s.state.WatchFleet(context.Background(), key.after, passed)
	if err != nil {
		return nil, err
	}
	for i := range resp.Racks {
		r := &resp.Racks[i]
		if brief {
			for j := range r.Hosts {
				if st := r.Hosts[j].Status; st != nil && (st.HardwareDetails != nil || st.BMCDetails != nil || st.OperationHistory != nil || st.Extra != nil) {
					cp := *st // the FSM's record is shared and immutable: copy
					cp.HardwareDetails, cp.BMCDetails, cp.OperationHistory, cp.Extra = nil, nil, nil, nil
					r.Hosts[j].Status = &cp
				}
			}
		}
		if r.Lease == nil {
			continue
		}
		if left, ok := s.store.LeaseTimeLeft(r.Rack); ok {
			d := wire.Duration(left.Round(time.Millisecond))
			r.ExpiresIn = &d
		}
	}
	return resp, nil
}

// briefParam reads ?brief= (true or false), which only the fleet watch takes.
func briefParam(c echo.Context, rack string) (bool, error) {
	switch v := c.QueryParam(wire.ParamBrief); v {
	case "", "false":
		return false, nil
	case "true":
		if rack != "" {
			return false, badField(wire.ParamBrief, "applies only to the watch of every rack (without rack=); a rack watch always answers whole hosts")
		}
		return true, nil
	default:
		return false, badField(wire.ParamBrief, "%q is not true or false", v)
	}
}
