package agent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestBMCConnectionsPerHost takes hosts from registration to available with
// a real agent and simulator and counts, on each BMC, the session logins
// and the TCP connections it accepted: one login (the session is kept
// between actions) and a handful of connections (kept and reused; an agent
// that dialed one per request made 24 per host on this path; 2 now, one
// of them this test's own /sim/state read, which arrives on the BMC's
// port; the bound leaves room for a loaded machine).
func TestBMCConnectionsPerHost(t *testing.T) {
	const n = 10
	e := newEnv(t, envOpts{bmcs: n})
	for i := 0; i < n; i++ {
		e.apply(e.hostSpec(fmt.Sprintf("h%02d", i), "r1", i))
	}
	e.startAgent("r1", "a1")
	for i := 0; i < n; i++ {
		e.waitHost(fmt.Sprintf("h%02d", i), 120*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
	}
	for i := 0; i < n; i++ {
		st, err := e.simState(i)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("BMC %d: %d logins, %d connections, %d Redfish requests, GETs %v", i, st.Logins, st.Connections, st.Requests, st.Gets)
		if st.Logins != 1 {
			t.Errorf("BMC %d: %d session logins from registration to available, want 1", i, st.Logins)
		}
		if st.Connections < 1 || st.Connections > 12 {
			t.Errorf("BMC %d: %d connections from registration to available, want 1 to 12 (kept and reused)", i, st.Connections)
		}
	}
}
