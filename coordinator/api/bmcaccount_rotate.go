package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// postBMCAccountRotation is POST /v1/hosts/{name}/bmc-account/rotation
// (operator): an on-demand rotation of the tier's BMC account on the
// host, recorded as the host's intents.rotateCredentials (202). The
// rack's lease holder rotates at its next look at the host; the request
// is dropped when the rotation is confirmed (the record's rotatedAt
// moves) or the fence at the BMC is found off (its reason). Refused (409)
// where no agent would rotate, saying why and what to do; 409
// upgrade_required while a voter does not apply the request yet.
func (s *Server) postBMCAccountRotation(c echo.Context) error {
	if err := need(c, wire.RoleOperator, false, ""); err != nil {
		return err
	}
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	var req wire.BMCAccountRotationRequest
	if err := bind(c, &req, true); err != nil {
		return err
	}
	if err := wire.ValidateBMCAccountRotationRequest(&req); err != nil {
		return err
	}
	v, err := s.apply(c, fsm.RequestBMCRotationCmd{Name: name, Actor: actor(c), Reason: req.Reason, Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	it := v.(wire.Intent)
	slog.Info("BMC account rotation requested", "host", name, "actor", it.Actor, "createdIndex", it.CreatedIndex)
	return c.JSON(http.StatusAccepted, it)
}
