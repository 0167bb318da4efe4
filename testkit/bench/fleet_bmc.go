package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// BMCCounts is what the simulators answered, summed over every one of
// them: Redfish requests by "METHOD path", their answers' body bytes, the
// TCP connections and session logins they accepted.
type BMCCounts struct {
	Requests, Connections, Logins float64
	BytesOut                      float64
	ByCall                        map[string]float64
}

// bmcCounts reads GET /sim/totals of every simulator process (on its
// first BMC's port): the whole Redfish work of the run so far, by
// request. An older simulator without it answers 404: then ok is false.
func (f *fleet) bmcCounts() (c BMCCounts, ok bool) {
	c.ByCall = map[string]float64{}
	hc := &http.Client{Timeout: 30 * time.Second}
	for j := range f.sims {
		resp, err := hc.Get(fmt.Sprintf("http://%s:%d/sim/totals", f.simAddr[j], f.simBase[j]))
		if err != nil {
			return c, false
		}
		var t bmcsim.Totals
		err = json.NewDecoder(resp.Body).Decode(&t)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			return c, false
		}
		c.Requests += float64(t.Requests)
		c.Connections += float64(t.Connections)
		c.Logins += float64(t.Logins)
		c.BytesOut += float64(t.BytesOut)
		for k, n := range t.ByCall {
			c.ByCall[k] += float64(n)
		}
	}
	return c, true
}

// bmcFigure is the "Redfish requests per host to available" line: the
// total per host, the largest calls, bytes and connections per host.
func (r FleetResult) bmcFigure() string {
	c := r.BMCToAvailable
	if c.ByCall == nil {
		return "not measured"
	}
	h := float64(r.Hosts)
	return fmt.Sprintf("%s; %.1f KB answered, %.2f connections, %.2f logins per host",
		formatRoutes(c.ByCall, h, 8), c.BytesOut/h/1000, c.Connections/h, c.Logins/h)
}
