package agent

import (
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// watch follows /v1/watch for the rack from the last index it applied. The
// client fails over between member URLs; on errors it backs off with
// jitter, so a coordinator outage is no busy loop. A change to a host's
// spec, intents or deletion wakes that host at once. After an answer that
// carried coalesceMinChanges changes or more (a busy rack: registering;
// see apply for what counts) it
// pauses Config.WatchCoalesce, so the changes meanwhile (mostly its own
// status writes coming back) come in one answer, each host once; a quiet
// rack's answers (a host or two: an intent, its acknowledgement) are
// followed at once, so reaction to a single change is not delayed.
// coalesceMinChanges is the size of a watch answer (changes as apply
// counts them) after which the watch pauses: more than a lone intent and its
// acknowledgement.
const coalesceMinChanges = 4

func (s *session) watch() {
	var index uint64
	bo := newBackoff(100*time.Millisecond, 5*time.Second)
	for s.ctx.Err() == nil {
		resp, err := s.next(index)
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
		changes := s.apply(resp)
		if resp.Index > index {
			index = resp.Index
		}
		if resp.Lease == nil || resp.Lease.Epoch != s.lease.Epoch || resp.Lease.Holder != s.lease.Holder {
			// The coordinator may already have given the rack away: ask
			// now instead of at the next renewal.
			s.a.keeper.renewNow()
		}
		s.syncedOnce.Do(func() { close(s.synced) })
		if d := coalescePause(s.a.cfg.WatchCoalesce, changes); d > 0 {
			sleepCtx(s.ctx, d)
		}
	}
}

// next asks for the rack's changes after index. The first answer of a
// session (index 0: every host is new to the store) carries the hosts'
// statuses, which the store takes once per host; later ones are asked
// without (status=false): the session's own statuses win over the
// coordinator's copy, which is mostly its own writes coming back. A
// status-less answer that names a host new to the store among those whose
// status it left out (moved in from another rack, pivoted in, back after
// a reset, or deleted and created again under a name the store holds) is
// asked again, from the same index, with statuses. A host
// with no status yet (just created by an operator) is not named there and
// costs nothing more. An older coordinator ignores status=false and
// answers whole hosts, naming none: nothing is asked again.
func (s *session) next(index uint64) (*wire.WatchResponse, error) {
	c, rack, timeout := s.a.cfg.Client, s.a.cfg.Rack, s.a.cfg.WatchTimeout
	if index == 0 {
		return c.Watch(s.ctx, rack, index, timeout)
	}
	resp, err := c.WatchWithoutStatus(s.ctx, rack, index, timeout)
	if err != nil {
		return nil, err
	}
	if n := s.store.firstNew(resp); n != "" {
		s.log.Debug("watch answer left out the status of a host new to this session; asking again with statuses", "rack", rack, "host", n, "index", index)
		return c.Watch(s.ctx, rack, index, timeout)
	}
	return resp, nil
}

// apply records one watch answer and queues every host that needs a look.
// It returns the answer's changes for coalescePause: hosts deleted or
// dropped by a reset, hosts queued, and hosts that came with a status (an
// answer with statuses: mostly the session's own writes coming back). A
// host in a status-less answer whose input did not change (its status
// alone changed, riding along with another change) is not counted, so a
// lone intent among such hosts is followed at once.
func (s *session) apply(resp *wire.WatchResponse) int {
	n := len(resp.Deleted)
	if resp.Reset {
		keep := make(map[string]bool, len(resp.Hosts))
		for _, h := range resp.Hosts {
			keep[h.Name] = true
		}
		for _, name := range s.store.names() {
			if !keep[name] {
				s.store.remove(name)
				s.queue.add(name)
				n++
			}
		}
	}
	for _, h := range resp.Hosts {
		if h.Rack != s.a.cfg.Rack {
			continue
		}
		if s.store.upsert(h) {
			s.queue.add(h.Name)
			n++
		} else if h.Status != nil {
			n++
		}
	}
	for _, name := range resp.Deleted {
		s.store.remove(name)
		s.queue.add(name)
	}
	return n
}

// coalescePause is the pause after an answer of changes (apply's count):
// d (Config.WatchCoalesce) for coalesceMinChanges changes or more, else
// none.
func coalescePause(d time.Duration, changes int) time.Duration {
	if d <= 0 || changes < coalesceMinChanges {
		return 0
	}
	return d
}
