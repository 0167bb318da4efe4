package agent

import (
	"context"

	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// actionFunc carries out one state-machine action: h is the host as the
// coordinator holds it, ph what the provisioner is given (credentials
// and data resolved).
type actionFunc func(s *session, ctx context.Context, h wire.Host, ph provisioner.Host) (provisioner.Result, error)

// actionTable is every action the agent carries out: a new action of the
// host state machine is one entry here (TestActionTableCoversHoststate
// finds one missing). An action not here fails as unsupported.
var actionTable = map[hoststate.Action]actionFunc{
	hoststate.ActionRegister:       call(provisioner.Provisioner.Register),
	hoststate.ActionInspect:        call(provisioner.Provisioner.Inspect),
	hoststate.ActionProvide:        call(provisioner.Provisioner.Provide),
	hoststate.ActionProvision:      call(provisioner.Provisioner.Provision),
	hoststate.ActionDeprovision:    call(provisioner.Provisioner.Deprovision),
	hoststate.ActionAdopt:          call(provisioner.Provisioner.Adopt),
	hoststate.ActionDetach:         call(provisioner.Provisioner.Detach),
	hoststate.ActionDelete:         call(provisioner.Provisioner.Delete),
	hoststate.ActionMaintenanceOn:  callOn(provisioner.Provisioner.SetMaintenance, true),
	hoststate.ActionMaintenanceOff: callOn(provisioner.Provisioner.SetMaintenance, false),
	hoststate.ActionPowerOn:        callOn(provisioner.Provisioner.SetPower, true),
	hoststate.ActionPowerOff:       callOn(provisioner.Provisioner.SetPower, false),
	hoststate.ActionSoftPowerOff:   call(provisioner.Provisioner.SoftPowerOff),
	hoststate.ActionFirmwareUpdate: (*session).firmwareUpdate,
	hoststate.ActionBuildRAID:      (*session).buildRAID,
	hoststate.ActionApplyBIOS:      (*session).applyBIOS,
	hoststate.ActionVerifyBIOS:     (*session).verifyBIOS,
	hoststate.ActionErase:          (*session).erase,
	hoststate.ActionReinspect: func(s *session, ctx context.Context, _ wire.Host, ph provisioner.Host) (provisioner.Result, error) {
		ph.HardwareDetails = nil // read again, whatever is known
		return s.a.cfg.Provisioner.Inspect(ctx, ph)
	},
}

// call is an action that is one provisioner method.
func call(m func(provisioner.Provisioner, context.Context, provisioner.Host) (provisioner.Result, error)) actionFunc {
	return func(s *session, ctx context.Context, _ wire.Host, ph provisioner.Host) (provisioner.Result, error) {
		return m(s.a.cfg.Provisioner, ctx, ph)
	}
}

// callOn is an action that is one provisioner method switching something
// on or off.
func callOn(m func(provisioner.Provisioner, context.Context, provisioner.Host, bool) (provisioner.Result, error), on bool) actionFunc {
	return func(s *session, ctx context.Context, _ wire.Host, ph provisioner.Host) (provisioner.Result, error) {
		return m(s.a.cfg.Provisioner, ctx, ph, on)
	}
}
