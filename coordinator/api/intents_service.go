package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// postService is POST /v1/hosts/{name}/intents/service: {reason}. The
// host's BIOS settings and firmware are brought to its spec once; the
// answer's plan states what that does and the power cycles it costs.
// Refused (409) unless the host is provisioned or externally
// provisioned, has spec.bios or spec.firmware, and is not detached,
// drained, being deleted or running a BMC task; 503 upgrade_required
// while a voter does not apply the intent yet.
func (s *Server) postService(c echo.Context, name string) error {
	var req wire.IntentRequest
	if err := bind(c, &req, true); err != nil {
		return err
	}
	if err := wire.ValidateService(&req); err != nil {
		return err
	}
	in := wire.Intent{Reason: req.Reason, Actor: actor(c)}
	v, err := s.apply(c, fsm.PutOperationIntentCmd{Name: name, Kind: wire.IntentService, Intent: in})
	if err != nil {
		return err
	}
	it := v.(wire.Intent)
	if it.Plan != nil {
		s.log.Info("service intent taken", "host", name, "actor", it.Actor, "powerCycles", it.Plan.PowerCycles, "plan", it.Plan.Message)
	}
	return c.JSON(http.StatusOK, it)
}
