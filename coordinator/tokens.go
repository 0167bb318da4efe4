package coordinator

import (
	"context"
	"sync"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// Last use of tokens. Every authenticated request notes its token's use
// here (minute granularity, in memory); the leader writes what moved in one
// TouchTokensCmd every Config.TouchInterval. A follower's notes are dropped
// at each tick: what a follower answers locally (GET /v1/status, the
// members list, ?stale=true reads) does not move LastUsed, while writes and
// linearizable reads, which it forwards, are authenticated and noted by
// the leader.

type tokenUses struct {
	mu   sync.Mutex
	seen map[string]time.Time // token ID -> last use, truncated to the minute
}

// NoteTokenUse records that the token with public ID id authenticated a
// request at at. Cheap: a map write under a mutex, no Raft write.
func (s *Store) NoteTokenUse(id string, at time.Time) {
	m := fsm.Minute(at)
	s.uses.mu.Lock()
	if s.uses.seen == nil {
		s.uses.seen = map[string]time.Time{}
	}
	if m.After(s.uses.seen[id]) {
		s.uses.seen[id] = m
	}
	s.uses.mu.Unlock()
}

// touchLoop flushes noted uses every TouchInterval while this node leads.
func (s *Store) touchLoop() {
	tick := time.NewTicker(s.cfg.TouchInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			s.flushTokenUses()
		case <-s.closing:
			return
		}
	}
}

// flushTokenUses writes the uses that moved a token's LastUsed forward.
func (s *Store) flushTokenUses() {
	s.uses.mu.Lock()
	seen := s.uses.seen
	s.uses.seen = nil
	s.uses.mu.Unlock()
	if len(seen) == 0 || !s.Ready() {
		return
	}
	used := map[string]time.Time{}
	for id, at := range seen {
		if info, ok := s.fsm.TokenByID(id); ok && at.After(info.LastUsed) {
			used[id] = at
		}
	}
	if len(used) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ApplyTimeout)
	defer cancel()
	if _, err := s.Apply(ctx, fsm.TouchTokensCmd{Used: used}); err != nil {
		s.log.Warn("could not record the tokens' last use; retrying at the next tick", "err", err, "tokens", len(used))
		s.uses.mu.Lock()
		for id, at := range used {
			if s.uses.seen == nil {
				s.uses.seen = map[string]time.Time{}
			}
			if at.After(s.uses.seen[id]) {
				s.uses.seen[id] = at
			}
		}
		s.uses.mu.Unlock()
	}
}
