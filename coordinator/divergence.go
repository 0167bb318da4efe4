package coordinator

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/shared/wire"
)

// Divergence detection: every member hashes its FSM state at the same
// indexes (fsm/statehash.go); the leader compares the hashes members report
// with its own each HashCheckInterval. A member whose hash differs at an
// index both hashed has a different state after the same log: a bug, a
// corrupted disk, or an entry applied differently. It raises
// rackfence_state_hash_mismatch{member} and a warning in GET /v1/status.

type divergence struct {
	mu    sync.Mutex
	check *wire.HashCheck

	mismatch *prometheus.GaugeVec
	checks   *prometheus.CounterVec
}

func newDivergence() *divergence {
	return &divergence{
		mismatch: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "rackfence_state_hash_mismatch",
			Help: "1 when the member's FSM state hash differs from the leader's at the same log index (its state diverged), 0 when they match; set by the leader.",
		}, []string{"member"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rackfence_state_hash_checks_total",
			Help: "Comparisons of a member's state hash with the leader's, by result: match, mismatch, unknown (no hash at a common index).",
		}, []string{"result"}),
	}
}

func (d *divergence) last() *wire.HashCheck {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.check == nil {
		return nil
	}
	c := *d.check
	return &c
}

// warnings are the status warnings of the last check.
func (d *divergence) warnings() []string {
	c := d.last()
	if c == nil {
		return nil
	}
	var out []string
	for _, id := range c.Mismatched {
		out = append(out, fmt.Sprintf("member %s's state hash at log index %d differs from the leader's: its state has diverged. "+
			"Remove it (rackfencectl cluster remove %s), move its data dir away and join it again so it copies the leader's state", id, c.Index, id))
	}
	return out
}

// checkHashes compares every member's reported hashes with the leader's.
func (s *Store) checkHashes() {
	mine := map[uint64]string{}
	for _, h := range s.fsm.StateHashes() {
		mine[h.Index] = h.Sum
	}
	c := &wire.HashCheck{At: time.Now().UTC().Format(time.RFC3339)}
	ms, err := s.Members()
	if err != nil {
		return
	}
	for _, m := range ms {
		if m.ID == s.cfg.NodeID {
			continue
		}
		p, ok := s.probes.get(m.ID)
		result := "unknown"
		if ok && p.err == nil {
			for _, h := range p.health.StateHashes {
				sum, both := mine[h.Index]
				if !both {
					continue
				}
				if result != "mismatch" {
					result = "match"
				}
				if sum != h.Sum {
					result = "mismatch"
				}
				c.Index = max(c.Index, h.Index)
			}
		}
		s.divergence.checks.WithLabelValues(result).Inc()
		switch result {
		case "match":
			c.Matching = append(c.Matching, m.ID)
			s.divergence.mismatch.WithLabelValues(m.ID).Set(0)
		case "mismatch":
			c.Mismatched = append(c.Mismatched, m.ID)
			s.divergence.mismatch.WithLabelValues(m.ID).Set(1)
			s.log.Error("a member's state hash differs from the leader's at the same log index: its state diverged",
				"member", m.ID, "leaderHashes", s.fsm.StateHashes(), "memberHashes", p.health.StateHashes)
		default:
			c.Unknown = append(c.Unknown, m.ID)
		}
	}
	sort.Strings(c.Matching)
	sort.Strings(c.Mismatched)
	sort.Strings(c.Unknown)
	s.divergence.mu.Lock()
	s.divergence.check = c
	s.divergence.mu.Unlock()
}
