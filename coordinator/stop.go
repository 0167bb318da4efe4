package coordinator

import "github.com/rackfence/rackfence/coordinator/fsm"

// stopApplying is the FSM's onStop: it runs on raft's apply goroutine, so
// the shutdown itself happens elsewhere (shutdownWhenStopped).
func (s *Store) stopApplying(r *fsm.StopReason) {
	s.ready.Store(false)
	s.log.Error("this member stopped applying the Raft log: it will not vote, lead or serve reads until it runs a binary that knows the entry",
		"index", r.Index, "type", r.Type, "version", r.Version, "reason", r.Message)
	s.stopOnce.Do(func() { close(s.stopCh) })
}

// shutdownWhenStopped shuts Raft down once the FSM stopped, so this member
// neither votes nor becomes leader with a state that lacks an entry. The
// HTTP API keeps answering: health says stopped, everything else 503.
func (s *Store) shutdownWhenStopped() {
	select {
	case <-s.stopCh:
	case <-s.closing:
		return
	}
	s.timers.stopAll()
	if err := s.raft.Shutdown().Error(); err != nil {
		s.log.Warn("raft shutdown after the stop", "err", err)
	}
	s.log.Error("raft shut down on this member after it stopped applying; upgrade its binary and restart it", "reason", s.fsm.Stopped().Message)
}
