package bmc

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/stmcginnis/gofish"

	"github.com/rackfence/rackfence/agent/errclass"
)

// Query options of reads other than inventory's system read: $expand of
// health's chassis, subsystems and collections, $select of the power
// read and health's system read, each only where the service root
// advertises it (ProtocolFeaturesSupported) and never trusted blindly:
//
//   - a refusal (400, 404, 501) turns that option off for the Conn and
//     the read is made again without it;
//   - an expanded answer whose links are not inline is followed link by
//     link (rfMember), and a collection whose Members are fewer than its
//     Members@odata.count is read again plainly;
//   - a $select answer without the property the read is for is checked
//     against the plain document: when that one has it, $select is off for
//     the Conn (a service that drops what was asked); when it has not, the
//     resource lacks it and $select stays.
//
// The state lives in rfDiscovery (one service), shared by parallel reads
// of one call under rfQuery's own lock.

// rfQuery is what the service offers of $expand and $select, and what it
// was found to answer.
type rfQuery struct {
	mu sync.Mutex
	// expandMax is how many levels "." expansion reaches (0: none, or
	// refused once); levels: the service takes ($levels=N).
	expandMax int
	levels    bool
	// selects: $select advertised and not found wrong.
	selects bool
	// absent: path|property pairs whose plain document lacks the property
	// (a $select answer without it is then right).
	absent map[string]bool
}

func newRFQuery(p gofish.ProtocolFeaturesSupported) *rfQuery {
	q := &rfQuery{selects: p.SelectQuery}
	if e := p.ExpandQuery; e.NoLinks {
		q.expandMax, q.levels = 1, e.Levels
		if e.Levels && e.MaxLevels > 1 {
			q.expandMax = e.MaxLevels
		}
	}
	return q
}

// expand is the "?$expand=…" suffix reaching levels deep (fewer where
// the service stops sooner), "" when the service offers no expansion.
func (q *rfQuery) expand(levels int) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(levels, q.expandMax)
	switch {
	case n < 1:
		return ""
	case n == 1 || !q.levels:
		return "?$expand=."
	}
	return "?$expand=.($levels=" + strconv.Itoa(n) + ")"
}

// oneLevel: the service expands one level only (iDRAC, iLO): a system
// read expanded carries its collections but not their members, so
// inventory reads the system plainly and each collection expanded.
func (q *rfQuery) oneLevel() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.expandMax == 1
}

func (q *rfQuery) expandOff() {
	q.mu.Lock()
	q.expandMax = 0
	q.mu.Unlock()
}

func (q *rfQuery) selectOn() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.selects
}

func (q *rfQuery) selectOff() {
	q.mu.Lock()
	q.selects = false
	q.mu.Unlock()
}

func (q *rfQuery) lacks(path, prop string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.absent[path+"|"+prop]
}

func (q *rfQuery) markLacks(path, prop string) {
	q.mu.Lock()
	if q.absent == nil {
		q.absent = map[string]bool{}
	}
	q.absent[path+"|"+prop] = true
	q.mu.Unlock()
}

// getExpanded reads path levels deep into v where the service offers
// expansion; a refusal turns it off for the Conn and reads path plainly.
func (c *Conn) getExpanded(s *rfSession, d *rfDiscovery, path string, levels int, v any) error {
	if x := d.query.expand(levels); x != "" {
		err := rfGet(s.api, path+x, v)
		if err == nil || !expandRefused(err) {
			return err
		}
		c.opts.Logger.Debug("redfish $expand refused, reading link by link", "bmc", c.addr, "path", path+x, "err", err.Error())
		d.query.expandOff()
	}
	return rfGet(s.api, path, v)
}

// getSelected reads path into v with $select of props where the service
// offers it; props[0] is the property the read is for (see rfQuery).
func (c *Conn) getSelected(s *rfSession, d *rfDiscovery, path string, props []string, v any) error {
	if d.query.selectOn() {
		var raw map[string]json.RawMessage
		err := rfGet(s.api, path+"?$select="+strings.Join(props, ","), v, &raw)
		switch {
		case err == nil:
			if _, ok := raw[props[0]]; ok || d.query.lacks(path, props[0]) {
				return nil
			}
		case !expandRefused(err):
			return err
		default:
			c.opts.Logger.Debug("redfish $select refused, reading whole documents", "bmc", c.addr, "path", path, "err", err.Error())
			d.query.selectOff()
			return rfGet(s.api, path, v)
		}
		// No such property in the answer: does the resource have it?
		raw = nil
		if err := rfGet(s.api, path, v, &raw); err != nil {
			return err
		}
		if _, ok := raw[props[0]]; ok {
			c.opts.Logger.Debug("redfish $select answer lacks what it was asked for, reading whole documents", "bmc", c.addr, "path", path, "property", props[0])
			d.query.selectOff()
		} else {
			d.query.markLacks(path, props[0])
		}
		return nil
	}
	return rfGet(s.api, path, v)
}

// load decodes the resource m links to into v: from the document inline
// when an expanded answer carried it, else by a GET.
func load(s *rfSession, m rfMember, v any) error {
	if m.raw != nil {
		if err := json.Unmarshal(m.raw, v); err != nil {
			return fmt.Errorf("%w: %s (inline): %v", errclass.ErrFailed, m.ID, err)
		}
		return nil
	}
	return rfGet(s.api, m.ID, v)
}

// loadExpanded is load, where a resource not inline is read levels deep.
func (c *Conn) loadExpanded(s *rfSession, d *rfDiscovery, m rfMember, levels int, v any) error {
	if m.raw != nil {
		return load(s, m, v)
	}
	return c.getExpanded(s, d, m.ID, levels, v)
}
