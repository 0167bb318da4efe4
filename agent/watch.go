package agent

import (
	"time"

	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/client"
)

// watch follows /v1/watch for the rack from the last index it applied. The
// client fails over between member URLs; on errors it backs off with
// jitter, so a coordinator outage is no busy loop. A change to a host's
// spec, intents or deletion wakes that host at once.
func (s *session) watch() {
	var index uint64
	bo := newBackoff(100*time.Millisecond, 5*time.Second)
	for s.ctx.Err() == nil {
		resp, err := s.a.cfg.Client.Watch(s.ctx, s.a.cfg.Rack, index, s.a.cfg.WatchTimeout)
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.a.cfg.Metrics.watchErrors.Inc()
			wait := bo.next()
			lvl := s.log.Warn
			if client.IsUnreachable(err) || client.IsNoLeader(err) {
				lvl = s.log.Info
			}
			lvl("watch failed; retrying", "rack", s.a.cfg.Rack, "index", index, "err", err.Error(), "retryIn", wait)
			sleepCtx(s.ctx, wait)
			continue
		}
		bo.reset()
		s.apply(resp)
		if resp.Index > index {
			index = resp.Index
		}
		if resp.Lease == nil || resp.Lease.Epoch != s.lease.Epoch || resp.Lease.Holder != s.lease.Holder {
			// The coordinator may already have given the rack away: ask
			// now instead of at the next renewal.
			s.a.keeper.renewNow()
		}
		s.syncedOnce.Do(func() { close(s.synced) })
	}
}

// apply records one watch answer and queues every host that needs a look.
func (s *session) apply(resp *api.WatchResponse) {
	if resp.Reset {
		keep := make(map[string]bool, len(resp.Hosts))
		for _, h := range resp.Hosts {
			keep[h.Name] = true
		}
		for _, n := range s.store.names() {
			if !keep[n] {
				s.store.remove(n)
				s.queue.add(n)
			}
		}
	}
	for _, h := range resp.Hosts {
		if h.Rack != s.a.cfg.Rack {
			continue
		}
		if s.store.upsert(h) {
			s.queue.add(h.Name)
		}
	}
	for _, n := range resp.Deleted {
		s.store.remove(n)
		s.queue.add(n)
	}
}
