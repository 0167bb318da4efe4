package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// Operation intents: POST …/intents/reboot, POST
// …/intents/inspect (both routed here by postIntent), DELETE
// …/intents/reboot/{requester} (a power-off hold withdrawn) and DELETE
// …/intents/{reboot,inspect} (a one-shot not yet handled withdrawn).

// postReboot: {mode, powerOff, requester, reason}. powerOff sets (or keeps)
// the requester's hold; otherwise a one-shot reboot.
func (s *Server) postReboot(c echo.Context, name string) error {
	var req wire.RebootRequest
	if err := bind(c, &req, true); err != nil {
		return err
	}
	if err := wire.ValidateReboot(&req); err != nil {
		return err
	}
	kind := wire.IntentReboot
	if req.PowerOff {
		kind = wire.IntentPowerOff
	}
	in := wire.Intent{Reason: req.Reason, Actor: actor(c), Mode: req.Mode, Requester: req.Requester}
	v, err := s.apply(c, fsm.PutOperationIntentCmd{Name: name, Kind: kind, Intent: in})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v.(wire.Intent))
}

// postInspect: {reason}; only an available host (409 naming its state).
func (s *Server) postInspect(c echo.Context, name string) error {
	var req wire.IntentRequest
	if err := bind(c, &req, true); err != nil {
		return err
	}
	if err := wire.ValidateInspect(&req); err != nil {
		return err
	}
	in := wire.Intent{Reason: req.Reason, Actor: actor(c)}
	v, err := s.apply(c, fsm.PutOperationIntentCmd{Name: name, Kind: wire.IntentInspect, Intent: in})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v.(wire.Intent))
}

// deleteOperationIntent withdraws a reboot or inspect not yet handled
// (requester ""), or the power-off requester holds.
func (s *Server) deleteOperationIntent(c echo.Context, name, kind, requester string) error {
	v, err := s.apply(c, fsm.DeleteOperationIntentCmd{Name: name, Kind: kind, Requester: requester})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v.(wire.Host))
}

// deletePowerOff is DELETE /v1/hosts/{name}/intents/reboot/{requester}.
func (s *Server) deletePowerOff(c echo.Context) error {
	name, kind, err := intentTarget(c)
	if err != nil {
		return err
	}
	if kind != wire.IntentReboot {
		return badField("kind", "only reboot takes a requester: DELETE /v1/hosts/{name}/intents/reboot/{requester} withdraws a power-off")
	}
	req := c.Param("requester")
	if !wire.ValidRequester(req) {
		return badField("requester", "%q is not a requester name: 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", req)
	}
	return s.deleteOperationIntent(c, name, wire.IntentPowerOff, req)
}
