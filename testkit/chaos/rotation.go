package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
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
const (
	operatorUser     = "admin"
	operatorPassword = "password"
)

// withRotation returns topo with its agents started with rotation on.
func withRotation(topo Topology) Topology {
	topo.AgentArgs = append(append([]string(nil), topo.AgentArgs...), RotationFlag)
	return topo
}

// waitVersions waits until the leader has recorded every member's binary
// version. Until then the version gate refuses the BMC account writes
// (upgrade_required): an agent that takes a rack over in that window
// makes its first changes with the operator's credentials and rotates
// each host's account only once the gate opens (agent/bmcaccount retries
// after a backoff), and the checker reports every mutation made with the
// operator's credentials, as well as a host detached before its retry
// that never gets a record: a cluster formed moments ago is not what the
// campaign tests.
func waitVersions(ctx context.Context, c *Cluster) error {
	return until(ctx, "every member's version recorded (the version gate)", func() error {
		st, err := c.Observer.Status(ctx)
		if err != nil {
			return err
		}
		for _, m := range st.Members {
			if m.Version == "" || strings.HasPrefix(m.Version, "legacy") {
				return fmt.Errorf("member %s: version %q", m.ID, m.Version)
			}
		}
		return nil
	})
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
// its pending one: one of them must work, and the fence must be on. A BMC
// that has no such account yet (the only rotation ever begun stopped
// before the BMC took it), or has it disabled because the host is
// detached or drained, is managed with the operator's credentials, which
// must work: the next holder creates or enables the account with them.
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
		res.Lockouts += len(st.Lockouts)
		for _, l := range st.Lockouts {
			bad("host %s: its BMC locked account %q at %s after failed logins, the last from %q (failed logins by account and User-Agent: %v)",
				h.Name, l.Account, l.At, l.UserAgent, st.FailedLogins)
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
		acct, err := c.bmcAccount(h, rec.Username)
		if err != nil {
			bad("host %s: reading its BMC's accounts: %v", h.Name, err)
			continue
		}
		if acct == nil || !acct.Enabled {
			// No account yet, or disabled while the host is out of the
			// tier's hands: the operator's credentials manage it, and
			// the next holder (re)enables it with them.
			if acct != nil {
				res.Disabled++
				if why := outOfHands(ctx, c, h.Name); why != "" {
					bad("host %s: the tier's account %q is disabled on its BMC, but %s", h.Name, rec.Username, why)
				}
			}
			if ok, err := c.bmcLogin(h, operatorUser, operatorPassword); !ok {
				bad("host %s: its BMC refuses the operator's credentials (%v), which manage the tier's account %q", h.Name, err, rec.Username)
			}
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

// outOfHands says why host is in the tier's hands ("" when it is detached
// or drained, so the agent disabled the tier's account on its BMC).
func outOfHands(ctx context.Context, c *Cluster, host string) string {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got, err := c.Observer.GetHost(qctx, host)
	switch {
	case err != nil:
		return "reading the host: " + err.Error()
	case got.Intents != nil && (got.Intents.Detach != nil || got.Intents.Drain != nil):
		return ""
	}
	return "the host is neither detached nor drained"
}

// bmcAccount is host's BMC account named user (nil: none).
func (c *Cluster) bmcAccount(h HostSpec, user string) (*bmcsim.AccountState, error) {
	var accts struct {
		Accounts []bmcsim.AccountState `json:"accounts"`
	}
	url := fmt.Sprintf("http://%s:%d/sim/accounts", c.Net.Node(h.Rack+"bmc").IP, bmcBasePort+h.Index)
	if err := getJSON(url, &accts); err != nil {
		return nil, err
	}
	for _, a := range accts.Accounts {
		if a.UserName == user {
			return &a, nil
		}
	}
	return nil, nil
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
