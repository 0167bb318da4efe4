package fsm

import "github.com/rackfence/rackfence/shared/wire"

// Reads for the leader's split of a rack report into per-host commands
// while a voter does not apply CmdRackStatus (coordinator/store_rackstatus.go).

// EpochIs is checkEpoch under the read lock.
func (f *FSM) EpochIs(rack string, epoch uint64) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.checkEpoch(rack, epoch)
}

// StatusCmdOf is the per-host command for h: a full write as is, a touch
// as a full write of the status the FSM holds (refused here as the FSM
// would refuse the touch). A host whose createdIndex is not h's Created
// is refused here too, as the FSM would refuse it; CmdStatus carries no
// createdIndex, so this check is the leader's alone, at the time of this
// read: a host deleted and created again between it and the entry's
// apply is written.
func (f *FSM) StatusCmdOf(c RackStatusCmd, h *wire.RackHostReport) (StatusCmd, error) {
	cmd := StatusCmd{Rack: c.Rack, Name: h.Name, Time: c.Time, Report: h.PerHost(c.Epoch)}
	if !h.IsTouch() && h.Created == 0 {
		return cmd, nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	old := f.s.Hosts[h.Name]
	if err := sameHost(old, h); err != nil || !h.IsTouch() {
		return cmd, err
	}
	if err := ownHost(old, c.Rack, h.Name); err != nil {
		return cmd, err
	}
	if err := touchBase(old, h); err != nil {
		return cmd, err
	}
	cmd.Report.Status = *old.Status
	return cmd, nil
}
