package coordinator

import (
	"context"
	"errors"
	"sync"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// ApplyRackStatus applies a rack status report as one CmdRackStatus entry.
// When some voter does not apply that type yet (a rolling upgrade), it
// splits the report into the per-host CmdStatus commands every binary
// applies: a touch becomes a full write of the status the FSM holds. The
// answer is the same either way. A report naming hosts' createdIndex is
// checked by Apply only once every voter applies that check
// (rackStatusForm); the split checks it on the leader alone
// (fsm.StatusCmdOf).
func (s *Store) ApplyRackStatus(ctx context.Context, c fsm.RackStatusCmd) (wire.RackStatusResult, error) {
	if s.Supports(fsm.CmdRackStatus, fsm.BodyBinary) {
		v, err := s.Apply(ctx, s.rackStatusForm(c))
		if err != nil {
			return wire.RackStatusResult{}, err
		}
		return v.(wire.RackStatusResult), nil
	}
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.rackStatusSplit.Inc()
	}
	return s.splitRackStatus(ctx, c)
}

// rackStatusForm is the form of c the leader writes: as it is once every
// voter applies body version 3 (the createdIndex check), otherwise without
// any host's createdIndex, as version 2, which a voter from before the
// check applies (and applies without it: the report is written unchecked,
// as that binary would write it).
func (s *Store) rackStatusForm(c fsm.RackStatusCmd) fsm.RackStatusCmd {
	c = c.PartsForm(s.Supports) // fsm/status_parts.go
	if !c.CreatedChecked() || s.Supports(fsm.CmdRackStatus, fsm.RackStatusCreatedVersion) {
		return c
	}
	return c.WithoutCreated()
}

// statusForm is the form of a host status command the leader writes: with
// its hardware health once every voter applies CmdStatus v3, with its
// day-two status once every voter applies v4, with its config drive's
// server once every voter applies v5, without them before
// (fsm/command_health.go, fsm/command_daytwo.go,
// fsm/command_driveserver.go). Other commands are
// returned as they are.
func (s *Store) statusForm(c fsm.Command) fsm.Command {
	sc, ok := c.(fsm.StatusCmd)
	if !ok {
		return c
	}
	return sc.StatusForm(s.Supports) // fsm/status_parts.go
}

// splitRackStatus is the fallback: one StatusCmd per host, submitted
// together so the batcher packs them into as few entries as it can.
func (s *Store) splitRackStatus(ctx context.Context, c fsm.RackStatusCmd) (wire.RackStatusResult, error) {
	if err := s.fsm.EpochIs(c.Rack, c.Epoch); err != nil {
		return wire.RackStatusResult{}, err
	}
	out := wire.RackStatusResult{Hosts: make([]wire.RackHostResult, len(c.Hosts))}
	errs := make([]error, len(c.Hosts))
	var wg sync.WaitGroup
	for i := range c.Hosts {
		cmd, err := s.fsm.StatusCmdOf(c, &c.Hosts[i])
		if err != nil {
			out.Hosts[i] = fsm.HostResult(cmd.Name, nil, err)
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, err := s.Apply(ctx, cmd)
			var e *fsm.Error
			if err != nil && (!errors.As(err, &e) || e.Code == wire.CodeStaleEpoch) {
				errs[i] = err
				return
			}
			out.Hosts[i] = fsm.HostResult(cmd.Name, v, err)
		}(i)
	}
	wg.Wait()
	// A stale epoch or a failure to write (no leader, shutdown) answers
	// the whole report, as the one-entry form would.
	for _, err := range errs {
		if err != nil {
			return wire.RackStatusResult{}, err
		}
	}
	out.Index = s.fsm.AppliedIndex()
	return out, nil
}

// commandForm is the form of other commands with an older form the leader
// writes until every voter applies the newer: a BMC task record without
// the version before the flash before CmdBMCTask v2 (the agent then judges
// an adopted flash by the BMC's task alone, as before).
func (s *Store) commandForm(c fsm.Command) fsm.Command {
	if tc, ok := c.(fsm.BMCTaskCmd); ok && tc.HasFromVersion() && !s.Supports(fsm.CmdBMCTask, fsm.BMCTaskFromVersion) {
		return tc.WithoutFromVersion()
	}
	return c
}
