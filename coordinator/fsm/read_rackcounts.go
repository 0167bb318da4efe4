package fsm

import "github.com/rackfence/rackfence/shared/wire"

// counts counts r's hosts by state and status for GET /v1/racks (empty
// maps, not nil, for a rack without hosts).
func (r *rackRec) counts() wire.RackHostCounts {
	c := wire.RackHostCounts{States: map[string]int{}, Statuses: map[string]int{}}
	for _, h := range r.Hosts {
		w := h.host()
		c.CountHost(&w)
	}
	return c
}
