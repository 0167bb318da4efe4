package coordinator

import (
	"context"
	"errors"
	"sync"

	"github.com/rackfence/rackfence/shared/api"
)

// ApplyRackStatus applies a rack status report as one CmdRackStatus entry.
// When some voter does not apply that type yet (a rolling upgrade), it
// splits the report into the per-host CmdStatus commands every binary
// applies: a touch becomes a full write of the status the FSM holds. The
// answer is the same either way.
func (s *Store) ApplyRackStatus(ctx context.Context, c RackStatusCmd) (api.RackStatusResult, error) {
	if s.Supports(CmdRackStatus, bodyBinary) {
		v, err := s.Apply(ctx, c)
		if err != nil {
			return api.RackStatusResult{}, err
		}
		return v.(api.RackStatusResult), nil
	}
	if s.cfg.Metrics != nil {
		s.cfg.Metrics.rackStatusSplit.Inc()
	}
	return s.splitRackStatus(ctx, c)
}

// splitRackStatus is the fallback: one StatusCmd per host, submitted
// together so the batcher packs them into as few entries as it can.
func (s *Store) splitRackStatus(ctx context.Context, c RackStatusCmd) (api.RackStatusResult, error) {
	if err := s.fsm.epochIs(c.Rack, c.Epoch); err != nil {
		return api.RackStatusResult{}, err
	}
	out := api.RackStatusResult{Hosts: make([]api.RackHostResult, len(c.Hosts))}
	errs := make([]error, len(c.Hosts))
	var wg sync.WaitGroup
	for i := range c.Hosts {
		h := &c.Hosts[i]
		out.Hosts[i].Name = h.Name
		cmd, err := s.fsm.statusCmdOf(c, h)
		if err != nil {
			out.Hosts[i].Error = errorDetail(err)
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, err := s.Apply(ctx, cmd)
			res := &out.Hosts[i]
			switch r := v.(type) {
			case DeleteHostResult:
				res.Removed = true
			case api.Host:
				res.ModifiedIndex = r.ModifiedIndex
			}
			var e *Error
			if err != nil && errors.As(err, &e) && e.Code != api.CodeStaleEpoch {
				res.Error = errorDetail(err)
				return
			}
			errs[i] = err
		}(i)
	}
	wg.Wait()
	// A stale epoch or a failure to write (no leader, shutdown) answers
	// the whole report, as the one-entry form would.
	for _, err := range errs {
		if err != nil {
			return api.RackStatusResult{}, err
		}
	}
	out.Index = s.fsm.applied.Load()
	return out, nil
}

// epochIs is checkEpoch under the read lock.
func (f *FSM) epochIs(rack string, epoch uint64) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.checkEpoch(rack, epoch)
}

// statusCmdOf is the per-host command for h: a full write as is, a touch
// as a full write of the status the FSM holds (refused here as the FSM
// would refuse the touch).
func (f *FSM) statusCmdOf(c RackStatusCmd, h *api.RackHostReport) (StatusCmd, error) {
	cmd := StatusCmd{Rack: c.Rack, Name: h.Name, Time: c.Time,
		Report: api.StatusReport{Epoch: c.Epoch, Acks: h.Acks, Events: h.Events, Remove: h.Remove}}
	if !h.IsTouch() {
		if h.Status != nil {
			cmd.Report.Status = *h.Status
		}
		return cmd, nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	old := f.s.Hosts[h.Name]
	if err := touchable(old, c.Rack, h); err != nil {
		return cmd, err
	}
	cmd.Report.Status = *old.Status
	return cmd, nil
}
