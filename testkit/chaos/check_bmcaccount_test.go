package chaos

import (
	"testing"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

const (
	uaA1 = "rackfence-agent/dev (a1; rack=r1; epoch=10)"
	uaA2 = "rackfence-agent/dev (a2; rack=r1; epoch=20)"
)

// setPassword is the audit line of an agent's rotation: the operator's
// credentials (password #1) set password gen of the tier's account.
func setPassword(ms int, ua string, gen uint64) bmcsim.AuditLine {
	l := audit(ms, ua)
	l.Method, l.Path, l.User, l.PasswordGen = "PATCH", "/redfish/v1/AccountService/Accounts/2", "admin", 1
	l.SetAccount, l.SetPasswordGen = "rackfence", gen
	return l
}

// reset is a power call accepted (or refused) with the tier's password gen.
func reset(ms int, ua string, gen uint64, status int) bmcsim.AuditLine {
	l := audit(ms, ua)
	l.User, l.PasswordGen, l.Status = "rackfence", gen, status
	if status == 401 {
		l.User, l.PasswordGen = "", 0
	}
	return l
}

// rotated: a1 (epoch 10) created the account with #2 and used it; a2
// (epoch 20, from 6000) rotated to #3 and used it; a1's late request
// with #2 was refused.
func rotated() []bmcsim.AuditLine {
	create := setPassword(100, uaA1, 2)
	create.Method, create.Path, create.Status = "POST", "/redfish/v1/AccountService/Accounts", 201
	return []bmcsim.AuditLine{create, reset(200, uaA1, 2, 204), setPassword(6100, uaA2, 3), reset(6200, uaA2, 3, 204),
		reset(6500, uaA1, 0, 401)}
}

func checkCreds(lines ...bmcsim.AuditLine) (CredentialsResult, []Violation) {
	return CheckCredentials(twoLeases(), map[string][]bmcsim.AuditLine{"r1": lines}, "admin")
}

func TestCredentialsClean(t *testing.T) {
	res, vs := checkCreds(rotated()...)
	if len(vs) != 0 {
		t.Fatalf("clean audit reported: %v", vs)
	}
	if res.Checked != 4 || res.Rotations != 2 || res.Refused != 1 {
		t.Errorf("counts %+v, want 4 checked, 2 rotations, 1 refused", res)
	}
}

// Planted: the new holder acts under its own epoch (its User-Agent is
// right, so the fencing checker sees nothing) with the password the old
// holder set: it skipped the rotation, and the old holder's late requests
// would be accepted too.
func TestCredentialsNewHolderDidNotRotate(t *testing.T) {
	lines := append(rotated()[:2], reset(6200, uaA2, 2, 204))
	_, vs := checkCreds(lines...)
	wantViolation(t, vs, CheckerCredentials, "a1 set under epoch 10")
	wantViolation(t, vs, CheckerCredentials, "while a2 held the rack under epoch 20")
	if fvs := CheckFencing(twoLeases(), mustMutations(t, lines...)); len(fvs) != 0 {
		t.Fatalf("the fencing checker saw it too (%v): the test no longer shows what only this checker sees", fvs)
	}
}

// Planted: the old holder's request, sent with its password, accepted
// after the rack moved (rotation off, or a request landing before the new
// holder's rotation), and one accepted while no lease was held.
func TestCredentialsStaleAccepted(t *testing.T) {
	_, vs := checkCreds(append(rotated(), reset(6050, uaA1, 2, 204))...)
	wantViolation(t, vs, CheckerCredentials, "while a2 held the rack under epoch 20 (granted 12:00:06.000000): stale credentials")
	_, vs = checkCreds(append(rotated(), reset(5500, uaA1, 2, 204))...)
	wantViolation(t, vs, CheckerCredentials, "while no agent held the rack")
}

// Planted: a power call with the operator's credentials; one with a
// password no agent set; an old holder's rotation landing after its
// epoch ended; an account change by the operator outside any lease.
func TestCredentialsBadCalls(t *testing.T) {
	op := audit(6300, uaA2)
	op.User, op.PasswordGen = "admin", 1
	_, vs := checkCreds(append(rotated(), op)...)
	wantViolation(t, vs, CheckerCredentials, "with the operator's credentials (\"admin\"), not the tier's rotated account")

	_, vs = checkCreds(append(rotated(), reset(6300, uaA2, 9, 204))...)
	wantViolation(t, vs, CheckerCredentials, "with password #9, which no agent set")

	_, vs = checkCreds(append(rotated(), setPassword(6300, uaA1, 4))...)
	wantViolation(t, vs, CheckerCredentials, "set password #4 of account \"rackfence\": by a1, 1.3s after its epoch 10 ended")

	unlock := setPassword(6300, "curl/8.0", 0)
	unlock.SetAccount = ""
	_, vs = checkCreds(append(rotated(), unlock)...)
	wantViolation(t, vs, CheckerCredentials, "changed an account with the operator's credentials: its User-Agent names no agent")
}
