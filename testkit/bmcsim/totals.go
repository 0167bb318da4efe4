package bmcsim

import "strings"

// Totals is what every BMC of one simulator process answered, summed:
// how a load tool counts the Redfish work of thousands of BMCs with one
// read per process (GET /sim/totals on any BMC's port) instead of one
// /sim/state per BMC.
type Totals struct {
	// BMCs is how many BMCs the process serves.
	BMCs int `json:"bmcs"`
	// Requests counts Redfish requests (not /sim/ ones), answered or not;
	// Connections the TCP connections the BMCs accepted; BytesOut the
	// bytes of the Redfish answers' bodies.
	Requests    int   `json:"requests"`
	Connections int   `json:"connections"`
	BytesOut    int64 `json:"bytesOut"`
	// Logins counts session logins accepted.
	Logins int `json:"logins"`
	// ByCall counts requests by "METHOD path" (a GET's path with its
	// $expand / $select query as State.Gets keys it; a session's own path
	// as "{id}").
	ByCall map[string]int `json:"byCall"`
}

// Totals sums the counters of every BMC.
func (s *Sim) Totals() Totals {
	t := Totals{BMCs: len(s.bmcs), ByCall: map[string]int{}}
	for _, b := range s.bmcs {
		b.mu.Lock()
		t.Requests += b.requests
		t.Connections += b.conns
		t.BytesOut += b.bytesOut
		t.Logins += b.logins
		for k, n := range b.gets {
			t.ByCall["GET "+k] += n
		}
		for k, n := range b.calls {
			t.ByCall[k] += n
		}
		b.mu.Unlock()
	}
	return t
}

// callPath is path as State.Calls keys it: a session's own path (its
// DELETE at logout) with the session id as "{id}", so the keys stay few.
func callPath(p *profile, path string) string {
	for _, coll := range []string{p.sessions, v1 + "/SessionService/Sessions"} {
		if coll != "" && strings.HasPrefix(path, coll+"/") {
			return coll + "/{id}"
		}
	}
	return path
}
