package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// listRacks is GET /v1/racks: every rack with hosts or a lease, its
// holder, its hosts counted by state and status (what the dashboard
// paints first, before it reads any host) and, from the leader, the time
// left on each held lease.
func (s *Server) listRacks(c echo.Context) error {
	if err := need(c, wire.RoleViewer, false, ""); err != nil {
		return err
	}
	if err := s.readBarrier(c); err != nil {
		return err
	}
	racks, idx := s.state.Racks()
	for i := range racks {
		r := &racks[i]
		if r.Holder == "" {
			continue
		}
		if left, ok := s.store.LeaseTimeLeft(r.Name); ok {
			d := wire.Duration(left.Round(time.Millisecond))
			r.ExpiresIn = &d
		}
	}
	return c.JSON(http.StatusOK, wire.List[wire.Rack]{Items: racks, Index: idx})
}
