package chaos

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// The fence at the BMC under chaos (Config.BMCAccountRotation): agents
// run with --bmc-account-rotation, so every takeover the schedule causes
// (a partition, a pause, a crash, a new agent id) rotates the tier's
// account on each host the new holder looks at. CheckCredentials then
// traces every accepted BMC mutation to the holder whose password it
// used, and accountsAtEnd checks what the run left behind.

// RotationFlag is the agent flag Config.BMCAccountRotation adds.
const RotationFlag = "--bmc-account-rotation"

// operatorUser is the user of the hosts' own BMC credentials (the
// "bmc" credentials StartCluster stores; bmcsim's first administrator).
const operatorUser = "admin"

// withRotation returns topo with its agents started with rotation on.
func withRotation(topo Topology) Topology {
	topo.AgentArgs = append(append([]string(nil), topo.AgentArgs...), RotationFlag)
	return topo
}

// readAudits reads every rack's BMC audit.
func readAudits(c *Cluster) (map[string][]bmcsim.AuditLine, error) {
	out := map[string][]bmcsim.AuditLine{}
	for _, r := range c.Topo.Racks {
		lines, err := bmcsim.ReadAudit(c.AuditFile(r))
		if err != nil {
			return nil, err
		}
		out[r] = lines
	}
	return out, nil
}

// accountsAtEnd runs after the agents stopped, with the coordinators and
// BMCs still up: it counts the BMCs' lockouts (each a violation), then
// reads each host's record from the coordinator as an admin (revealed,
// audited) and logs in at the host's BMC with its current password, then
// its pending one: one of them must work, and the fence must be on.
func accountsAtEnd(ctx context.Context, c *Cluster, hosts []HostSpec, res *CredentialsResult) []Violation {
	var out []Violation
	bad := func(f string, a ...any) {
		out = append(out, Violation{Checker: CheckerCredentials, What: fmt.Sprintf(f, a...)})
	}
	for _, h := range hosts {
		var st bmcsim.State
		if err := getJSON(c.SimStateURL(h.Rack, h.Index), &st); err != nil {
			bad("host %s: reading its BMC's lockouts: %v", h.Name, err)
			continue
		}
		res.Lockouts += st.Lockouts
		if st.Lockouts > 0 {
			bad("host %s: its BMC locked %d accounts out after failed logins", h.Name, st.Lockouts)
		}
	}
	for _, h := range hosts {
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		rec, err := c.Observer.GetBMCAccount(qctx, h.Name, true, 0)
		cancel()
		if err != nil {
			bad("host %s: reading its BMC account record: %v", h.Name, err)
			continue
		}
		res.Hosts++
		if rec.PendingPassword != "" {
			res.Pending++
		}
		switch rec.State {
		case wire.BMCAccountOff:
			bad("host %s: the fence at the BMC is off: %s", h.Name, rec.Reason)
			continue
		case wire.BMCAccountConfirmed, wire.BMCAccountPending:
		default:
			bad("host %s: BMC account record in state %q", h.Name, rec.State)
			continue
		}
		works := false
		for _, pw := range []string{rec.Password, rec.PendingPassword} {
			if pw == "" {
				continue
			}
			ok, err := c.bmcLogin(h, rec.Username, pw)
			if err != nil {
				bad("host %s: logging in at its BMC: %v", h.Name, err)
			}
			if ok {
				works = true
				break
			}
		}
		if !works {
			bad("host %s: neither the current nor the pending password of %q on the coordinator (state %s, epoch %d, pending epoch %d) works at its BMC: locked out",
				h.Name, rec.Username, rec.State, rec.Epoch, rec.PendingEpoch)
		}
	}
	return out
}

// bmcLogin reports whether user/password are accepted by host's BMC (an
// authenticated GET of the system; a refusal counts as a failed login).
func (c *Cluster) bmcLogin(h HostSpec, user, password string) (bool, error) {
	url := fmt.Sprintf("http://%s:%d/redfish/v1/Systems/1", c.Net.Node(h.Rack+"bmc").IP, bmcBasePort+h.Index)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	req.SetBasicAuth(user, password)
	resp, err := probe.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusUnauthorized:
		return false, nil
	}
	return false, fmt.Errorf("GET %s answered %d", url, resp.StatusCode)
}
