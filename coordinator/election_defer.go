package coordinator

import "github.com/hashicorp/raft"

// electionDeferral is how many times its usual heartbeat and election
// timeouts a member that cannot write its Raft log waits before it stands
// for leader.
//
// Such a member cannot lead: the first entry a new leader appends (raft's
// no-op) fails, and it steps down again. But it had the up-to-date log
// and, as the leader that just stepped down, the earliest timer, so it
// won election after election: a leader whose disk filled was re-elected
// three times in 6.2 s before another member took over. Waiting ten
// times longer (10–20 s with the defaults) lets a healthy member win the
// first election. A member that cannot write still votes, and still
// stands once its longer timeout passes, so a tier whose members all
// fail elects as before, only slower; a tier of one member never defers
// (there is nobody else to lead).
const electionDeferral = 10

// deferElections follows s.logw: while this member's log writes fail it
// reloads raft with base's timeouts times electionDeferral, and with
// base's again once a write succeeds. It ends when the store closes.
func (s *Store) deferElections(base raft.ReloadableConfig) {
	deferred := false
	for {
		select {
		case <-s.closing:
			return
		case <-s.logw.changed:
		}
		failing, _ := s.logw.state()
		want := failing && s.otherVoters()
		if want == deferred {
			continue
		}
		rc := s.raft.ReloadableConfig()
		rc.HeartbeatTimeout, rc.ElectionTimeout = base.HeartbeatTimeout, base.ElectionTimeout
		if want {
			rc.HeartbeatTimeout *= electionDeferral
			rc.ElectionTimeout *= electionDeferral
		}
		if err := s.raft.ReloadConfig(rc); err != nil {
			s.log.Warn("could not change when this member stands for leader", "err", err)
			continue
		}
		deferred = want
		if want {
			s.log.Warn("this member cannot write its Raft log, so it stands for leader only after a longer silence (a healthy member wins first)",
				"heartbeatTimeout", rc.HeartbeatTimeout.String(), "electionTimeout", rc.ElectionTimeout.String())
		} else {
			s.log.Info("this member stands for leader as usual again",
				"heartbeatTimeout", rc.HeartbeatTimeout.String(), "electionTimeout", rc.ElectionTimeout.String())
		}
	}
}

// otherVoters reports whether the latest configuration has a voter other
// than this member.
func (s *Store) otherVoters() bool {
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return true
	}
	for _, srv := range f.Configuration().Servers {
		if srv.Suffrage == raft.Voter && srv.ID != raft.ServerID(s.cfg.NodeID) {
			return true
		}
	}
	return false
}
