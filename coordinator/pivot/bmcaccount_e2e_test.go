package pivot_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestPivotDisablesSourceAccount: both tiers run --bmc-account-rotation,
// each with an account of its own on the BMC. A pivot from site-a to
// site-b disables site-a's account on the BMC as site-a's agent lets the
// host go (before it acknowledges the detach): the BMC refuses site-a's
// last password from then on, whatever site-a's data says, while site-b
// creates and rotates its own account and manages the host with it.
func TestPivotDisablesSourceAccount(t *testing.T) {
	testenv.SkipShort(t)
	x := startTiersWith(t, 1, []string{"--bmc-account-rotation", "--bmc-account-username", "rf-site-a"},
		[]string{"--bmc-account-rotation", "--bmc-account-username", "rf-site-b"})
	a, b, sim := x.a, x.b, x.sim
	a.Apply(sim.Host("h0", "r1", 0))
	a.WaitHost("h0", 2*time.Minute, "available in site-a", rig.StateIs(wire.StateAvailable, wire.OpOK))
	recA := confirmedAccount(t, a, "h0")
	if !loginWorks(t, sim, 0, recA.Username, recA.Password) {
		t.Fatalf("site-a's account %s does not work before the pivot", recA.Username)
	}

	if out, code := x.ctl(a, x.adminTokA, "pivot", "h0", "--to", "site-b", "--wait"); code != 0 {
		t.Fatalf("pivot exited %d:\n%s", code, out)
	}
	b.WaitHost("h0", 2*time.Minute, "available in site-b", rig.StateIs(wire.StateAvailable, wire.OpOK))
	recB := confirmedAccount(t, b, "h0")

	accts := simAccounts(t, sim, 0)
	if !accts[recB.Username] || accts[recA.Username] {
		t.Fatalf("BMC accounts after the pivot (name: enabled): %v; want %s disabled, %s enabled", accts, recA.Username, recB.Username)
	}
	if loginWorks(t, sim, 0, recA.Username, recA.Password) {
		t.Error("the BMC still takes site-a's password after the pivot")
	}
	if !loginWorks(t, sim, 0, recB.Username, recB.Password) {
		t.Error("the BMC refuses site-b's account")
	}
	if r, err := a.Admin.GetBMCAccount(rig.Ctx(t), "h0", false, 0); err != nil || r.Username != recA.Username {
		t.Errorf("site-a's record after the pivot: %v %v (kept, the host may come back)", r, err)
	}
	t.Logf("after the pivot: BMC accounts %v", accts)
}

// confirmedAccount waits for host's BMC account record in tier c to be
// confirmed and reveals it (admin).
func confirmedAccount(t *testing.T, c *rig.Coordinator, host string) *wire.BMCAccount {
	t.Helper()
	var rec *wire.BMCAccount
	testenv.Eventually(t, 2*time.Minute, "the BMC account of "+host+" confirmed", func() error {
		r, err := c.Admin.GetBMCAccount(rig.Ctx(t), host, true, 0)
		if err != nil || r.State != wire.BMCAccountConfirmed {
			return fmt.Errorf("record %v %v", r, err)
		}
		rec = r
		return nil
	})
	return rec
}

// simAccounts reads BMC i's account table: name → enabled.
func simAccounts(t *testing.T, sim *rig.Sim, i int) map[string]bool {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/sim/accounts", sim.Base+i))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Accounts []bmcsim.AccountState }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, a := range out.Accounts {
		if a.UserName != "" {
			m[a.UserName] = a.Enabled
		}
	}
	return m
}

// loginWorks: the BMC answers a GET with user/password (HTTP Basic).
func loginWorks(t *testing.T, sim *rig.Sim, i int, user, pw string) bool {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/redfish/v1/Systems", sim.Base+i), nil)
	req.SetBasicAuth(user, pw)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
