package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// whoami tells any authenticated caller who its token names, so a client
// (the dashboard) can show only the actions the role may take.
func (s *Server) whoami(c echo.Context) error {
	id := who(c)
	return c.JSON(http.StatusOK, wire.WhoAmI{Name: id.Name, Role: id.Role, Rack: id.Rack})
}
