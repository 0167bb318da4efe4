package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	wire "github.com/rackfence/rackfence/shared/api"
)

// watchFleet answers a watch without ?rack=: the changes of every rack
// (the dashboard's live view), each held lease with the time the leader's
// expiry clock gives it.
func (s *Server) watchFleet(c echo.Context, after uint64, timeout time.Duration) error {
	resp, err := s.store.FSM().WatchFleet(c.Request().Context(), after, timeout)
	if err != nil {
		return err
	}
	for i := range resp.Racks {
		r := &resp.Racks[i]
		if r.Lease == nil {
			continue
		}
		if left, ok := s.store.LeaseTimeLeft(r.Rack); ok {
			d := wire.Duration(left.Round(time.Millisecond))
			r.ExpiresIn = &d
		}
	}
	return c.JSON(http.StatusOK, resp)
}
