package chaos

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// CheckerCredentials is the checker of the fence at the BMC
// (Config.BMCAccountRotation): every mutation a BMC accepted was made
// with the credentials of the agent holding the rack's lease when the BMC
// accepted it; no account was locked out; every host ends with a
// password on the coordinator that works at its BMC.
const CheckerCredentials = "bmc-credentials"

// CredentialsResult is what the credentials checker counted.
type CredentialsResult struct {
	// Checked is the mutations the BMCs accepted, each traced to the
	// password it authenticated with and that password to the agent and
	// epoch that set it.
	Checked int `json:"checked"`
	// Rotations is the passwords of the tier's account the BMCs took
	// (accounts created, passwords changed).
	Rotations int `json:"rotations"`
	// Refused is the mutations the BMCs answered 401 (an older holder's
	// among them): refused, nothing changed.
	Refused int `json:"refused"`
	// Lockouts is the accounts the BMCs locked after failed logins.
	Lockouts int `json:"lockouts"`
	// Hosts is the hosts whose coordinator record was tried at the BMC
	// after the run; Pending those whose record still held a pending
	// password (an agent stopped mid-rotation).
	Hosts   int `json:"hosts"`
	Pending int `json:"pending"`
	// Disabled is the hosts whose tier account was disabled on the BMC
	// at the end (detached or drained hosts).
	Disabled int `json:"disabled"`
}

// setter is who set one password of a BMC's account, by the audit line
// that set it.
type setter struct {
	account string
	agent   string
	epoch   uint64
	at      time.Time
}

// CheckCredentials checks the audits of every rack's BMCs (audits, by
// rack) against the lease history (as CheckFencing reads it). operator is
// the user of the hosts' own credentials, which the agents only use to
// manage the tier's account.
//
// A password's owner is read from the audit line that set it (its
// User-Agent names agent and epoch), and that line must itself fall in
// the window of that epoch, held by that agent. Then every other accepted
// mutation must have authenticated with a password whose owner is the
// holder of the lease window it arrived in, under that window's epoch.
// Calls under the account service made with the operator's credentials
// are the rotation itself: each must come from the holder, as above. Any
// other mutation accepted with the operator's credentials is a violation:
// with rotation on, no power, boot or media call uses them.
func CheckCredentials(leases map[string][]wire.LeaseRecord, audits map[string][]bmcsim.AuditLine, operator string) (CredentialsResult, []Violation) {
	var res CredentialsResult
	var out []Violation
	bad := func(f string, a ...any) {
		out = append(out, Violation{Checker: CheckerCredentials, What: fmt.Sprintf(f, a...)})
	}
	racks := make([]string, 0, len(audits))
	for r := range audits {
		racks = append(racks, r)
	}
	sort.Strings(racks)
	for _, rack := range racks {
		recs := leases[rack]
		type line struct {
			bmcsim.AuditLine
			at time.Time
		}
		var lines []line
		for _, l := range audits[rack] {
			at, err := time.Parse(time.RFC3339Nano, l.Time)
			if err != nil {
				bad("rack %s: audit line %s %s has no time (%q)", rack, l.Method, l.Path, l.Time)
				continue
			}
			lines = append(lines, line{l, at})
		}
		sort.SliceStable(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
		call := func(l line) string {
			return fmt.Sprintf("BMC :%d %s %s at %s", l.Port, l.Method, l.Path, ts(l.at))
		}
		// Each password's owner, and whether it was set inside the
		// owner's lease.
		owners := map[int]map[uint64]setter{}
		for _, l := range lines {
			if l.SetPasswordGen == 0 || !accepted(l.Status) {
				continue
			}
			agent, uaRack, epoch := parseUA(l.UserAgent)
			if owners[l.Port] == nil {
				owners[l.Port] = map[uint64]setter{}
			}
			owners[l.Port][l.SetPasswordGen] = setter{account: l.SetAccount, agent: agent, epoch: epoch, at: l.at}
			if l.SetAccount != operator {
				res.Rotations++
			}
			if why := heldBy(recs, rack, agent, uaRack, epoch, l.at); why != "" {
				bad("rack %s: %s set password #%d of account %q: %s", rack, call(l), l.SetPasswordGen, l.SetAccount, why)
			}
		}
		for _, l := range lines {
			if l.Status == http.StatusUnauthorized {
				res.Refused++
			}
			if !accepted(l.Status) {
				continue
			}
			res.Checked++
			if l.User == operator {
				if isAccountCall(l.Path) {
					if l.SetPasswordGen == 0 {
						agent, uaRack, epoch := parseUA(l.UserAgent)
						if why := heldBy(recs, rack, agent, uaRack, epoch, l.at); why != "" {
							bad("rack %s: %s changed an account with the operator's credentials: %s", rack, call(l), why)
						}
					}
					continue
				}
				bad("rack %s: %s was accepted with the operator's credentials (%q), not the tier's rotated account (%s)", rack, call(l), operator, l.UserAgent)
				continue
			}
			own, ok := owners[l.Port][l.PasswordGen]
			if !ok || own.account != l.User {
				bad("rack %s: %s was accepted as %q with password #%d, which no agent set (changed by hand, or the audit lost the line)", rack, call(l), l.User, l.PasswordGen)
				continue
			}
			cur, ok := leaseAt(recs, l.at)
			switch {
			case !ok:
				bad("rack %s: %s was accepted with the password %s set under epoch %d at %s, while no agent held the rack", rack, call(l), own.agent, own.epoch, ts(own.at))
			case cur.Holder != own.agent || cur.Epoch != own.epoch:
				bad("rack %s: %s was accepted with the password %s set under epoch %d at %s, while %s held the rack under epoch %d (granted %s): stale credentials",
					rack, call(l), own.agent, own.epoch, ts(own.at), cur.Holder, cur.Epoch, ts(cur.GrantedAt))
			}
		}
	}
	return res, out
}

func accepted(status int) bool { return status >= 200 && status < 300 }

func isAccountCall(path string) bool {
	return strings.HasPrefix(path, "/redfish/v1/AccountService/") || path == "/redfish/v1/AccountService"
}

// parseUA reads agent, rack and epoch from an agent's User-Agent (all
// empty when it is not one).
func parseUA(ua string) (agent, rack string, epoch uint64) {
	g := agentUA.FindStringSubmatch(ua)
	if g == nil {
		return "", "", 0
	}
	epoch, _ = strconv.ParseUint(g[3], 10, 64)
	return g[1], g[2], epoch
}

// heldBy says why agent did not hold rack under epoch at t ("" when it
// did).
func heldBy(recs []wire.LeaseRecord, rack, agent, uaRack string, epoch uint64, at time.Time) string {
	if epoch == 0 {
		return "its User-Agent names no agent and lease epoch"
	}
	if uaRack != rack {
		return fmt.Sprintf("%s acted under a lease of rack %s", agent, uaRack)
	}
	for _, r := range recs {
		if r.Epoch != epoch {
			continue
		}
		switch {
		case r.Holder != agent:
			return fmt.Sprintf("%s named epoch %d, which was granted to %s", agent, epoch, r.Holder)
		case at.Before(r.GrantedAt):
			return fmt.Sprintf("by %s, before its epoch %d was granted (%s)", agent, epoch, ts(r.GrantedAt))
		case r.EndedAt != nil && at.After(*r.EndedAt):
			return fmt.Sprintf("by %s, %s after its epoch %d ended (%s)", agent, at.Sub(*r.EndedAt), epoch, ts(*r.EndedAt))
		}
		return ""
	}
	return fmt.Sprintf("by %s under epoch %d, which the coordinator never granted", agent, epoch)
}

// leaseAt is the lease window of recs that t falls in (the latest granted
// when windows overlap, which CheckFencing reports).
func leaseAt(recs []wire.LeaseRecord, t time.Time) (wire.LeaseRecord, bool) {
	var best wire.LeaseRecord
	found := false
	for _, r := range recs {
		if t.Before(r.GrantedAt) || (r.EndedAt != nil && t.After(*r.EndedAt)) {
			continue
		}
		if !found || r.GrantedAt.After(best.GrantedAt) {
			best, found = r, true
		}
	}
	return best, found
}
