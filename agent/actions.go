package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// runAction runs one state-machine action through the provisioner and
// turns its result into the Outcome the next Step reads.
func (s *session) runAction(name string, h wire.Host, st *wire.HostStatus, act hoststate.Action) hoststate.Outcome {
	out := hoststate.Outcome{Action: act}
	// A paused or partitioned agent finds out here, before any call: read
	// calls are skipped too, mutations are refused again by the guard.
	if _, ok := s.a.cfg.Holder.Valid(0); !ok {
		out.Err, out.Message = hoststate.ErrClassFenced, "the rack lease is no longer valid"
		return out
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()

	ph := provisioner.Host{Name: h.Name, BMC: h.BMC, BootMACAddress: h.BootMACAddress,
		Image: h.Image, Online: h.Online, RootDeviceHints: h.RootDeviceHints, BootMode: h.BootMode, BootMethod: h.BootMethod,
		AutomatedCleaningMode: h.AutomatedCleaningMode, ConfigDriveWanted: h.UserData != nil || h.NetworkData != nil || h.MetaData != nil}
	if st != nil {
		ph.ProvisioningID = st.ProvisioningID
		ph.HardwareDetails = st.HardwareDetails
	}
	if h.BMC.Credentials != "" {
		u, p, err := s.a.creds.get(ctx, h.BMC.Credentials)
		if err == nil {
			u, p, err = s.tierCredentials(ctx, h, u, p)
		}
		if err != nil {
			out.Err, out.Message = classify(err), err.Error()
			return out
		}
		ph.Username, ph.Password = u, p
	}
	if err := s.resolveData(ctx, &h, act, &ph); err != nil {
		out.Err, out.Message = classify(err), err.Error()
		return out
	}

	start := time.Now()
	var res provisioner.Result
	var err error
	if do, ok := actionTable[act]; ok {
		res, err = do(s, ctx, h, ph)
	} else {
		err = fmt.Errorf("%w: the agent does not know action %q (state machine newer than the agent?)", errclass.ErrUnsupported, act)
	}
	s.a.cfg.Metrics.observeAction(string(act), time.Since(start), err)

	out.ProvisioningID = res.ProvisioningID
	out.PoweredOn = res.PoweredOn
	out.HardwareDetails = res.HardwareDetails
	out.BMCDetails = res.BMCDetails
	out.ConfigDrive = res.ConfigDrive
	out.InProgress = res.InProgress
	out.ResetNeeded = res.ResetNeeded
	out.DayTwo = res.DayTwo
	out.Message = res.Message
	if err != nil {
		out.Err = classify(err)
		out.Message = err.Error()
		if out.Err == hoststate.ErrClassAuth && h.BMC.Credentials != "" {
			s.a.creds.forget(h.BMC.Credentials)
			s.forgetTierCredentials(h.Name)
		}
		s.log.Debug("action failed", "host", name, "action", act, "class", out.Err, "err", out.Message)
	}
	return out
}

// classify maps a provisioner or guard error to the state machine's class.
func classify(err error) hoststate.ErrClass {
	switch {
	case err == nil:
		return hoststate.ErrNone
	case errors.Is(err, guard.ErrFenced):
		return hoststate.ErrClassFenced
	case errors.Is(err, errclass.ErrAuth):
		return hoststate.ErrClassAuth
	case errors.Is(err, errclass.ErrNotFound):
		return hoststate.ErrClassNotFound
	case errors.Is(err, errclass.ErrTransient),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return hoststate.ErrClassTransient
	default: // ErrFailed, ErrUnsupported, anything unclassified
		return hoststate.ErrClassFailed
	}
}
