package bmcsim

import (
	"crypto/subtle"
	"strconv"
	"time"
	"unicode"
)

// The account table of a BMC (Redfish AccountService, DMTF ManagerAccount):
// who may log in, with which role. Basic auth and session logins check it;
// every BMC starts with one Administrator account, Config.Username /
// Config.Password. The policy (slots, password rules, lockout) is the
// profile's (accountPolicies) unless Config.Accounts overrides it.

// Roles of the simulated account service (DMTF's predefined roles).
const (
	RoleAdministrator = "Administrator"
	RoleOperator      = "Operator"
	RoleReadOnly      = "ReadOnly"
)

// Character classes AccountPolicy.RequiredClasses may name.
const (
	ClassUpper   = "upper"
	ClassLower   = "lower"
	ClassDigit   = "digit"
	ClassSpecial = "special"
)

// AccountPolicy is how a BMC's account service behaves.
type AccountPolicy struct {
	// Slots is how many accounts the BMC holds, the first one included.
	Slots int `json:"slots"`
	// FixedSlots: every slot is a member of the Accounts collection, an
	// empty one with UserName ""; an account is created by PATCHing an
	// empty slot and POST is refused (iDRAC). Otherwise POST creates one
	// (DMTF, iLO, OpenBMC).
	FixedSlots bool `json:"fixedSlots"`
	// FirstID is the Id of the first slot (iDRAC: 2, slot 1 is reserved).
	FirstID int `json:"firstId"`
	// NoCreate: the account service refuses to create accounts (405).
	NoCreate bool `json:"noCreate"`
	// MinPasswordLength, MaxPasswordLength and RequiredClasses are the
	// password rules a create or password change must meet.
	MinPasswordLength int      `json:"minPasswordLength"`
	MaxPasswordLength int      `json:"maxPasswordLength"`
	RequiredClasses   []string `json:"requiredClasses,omitempty"`
	// LockoutThreshold failed logins in a row lock an account (0: never)
	// for LockoutDuration (0: until an administrator PATCHes Locked false).
	LockoutThreshold int           `json:"lockoutThreshold"`
	LockoutDuration  time.Duration `json:"lockoutDuration"`
	// KeepOldPassword: a password change is answered 200 but not applied
	// (a faulty BMC; how a client that checks the new password is tested).
	KeepOldPassword bool `json:"keepOldPassword,omitempty"`
}

// accountPolicies are the profiles' published policies; a profile not
// named here gets DMTF's mockup values ("default").
var accountPolicies = map[string]AccountPolicy{
	// DMTF public-rackmount1 mockup: MinPasswordLength 8, MaxPasswordLength 20.
	"default": {Slots: 16, FirstID: 1, MinPasswordLength: 8, MaxPasswordLength: 20, LockoutThreshold: 5, LockoutDuration: 30 * time.Second},
	// HPE iLO 5: 12 users, 8..39 characters, complexity on.
	"ilo": {Slots: 12, FirstID: 1, MinPasswordLength: 8, MaxPasswordLength: 39,
		RequiredClasses: []string{ClassUpper, ClassLower, ClassDigit}},
	// Dell iDRAC9: 16 fixed slots, slot 1 reserved, at most 20 characters.
	"idrac": {Slots: 15, FixedSlots: true, FirstID: 2, MinPasswordLength: 8, MaxPasswordLength: 20,
		RequiredClasses: []string{ClassUpper, ClassLower, ClassDigit, ClassSpecial}, LockoutThreshold: 3, LockoutDuration: time.Minute},
	// OpenBMC bmcweb: 15 users, 8..20 characters, pam_faillock.
	"openbmc": {Slots: 15, FirstID: 1, MinPasswordLength: 8, MaxPasswordLength: 20, LockoutThreshold: 10, LockoutDuration: 5 * time.Minute},
}

func policyFor(profile string) AccountPolicy {
	if p, ok := accountPolicies[profile]; ok {
		return p
	}
	return accountPolicies["default"]
}

// account is one slot of the table; an empty slot has user "".
type account struct {
	id       string
	user     string
	password string
	role     string
	enabled  bool
	failures int
	locked   time.Time // zero: not locked
	// gen numbers the password the account holds: every password one of
	// the BMC's accounts takes (created, changed) gets the BMC's next
	// number (bmc.pwGen), so account and gen name one set of credentials.
	gen uint64
}

// Lockout is one account locked by failed logins: when, and the
// User-Agent of the login that reached the threshold.
type Lockout struct {
	Account   string `json:"account"`
	At        string `json:"at"`
	UserAgent string `json:"userAgent"`
}

// AccountState is one account as GET /sim/accounts and Sim.Accounts show
// it (never its password).
type AccountState struct {
	ID       string `json:"id"`
	UserName string `json:"userName"`
	RoleID   string `json:"roleId"`
	Enabled  bool   `json:"enabled"`
	Locked   bool   `json:"locked"`
	Failures int    `json:"failures"`
}

// initAccounts fills the table on first use. b.mu held.
func (b *bmc) initAccounts() {
	if b.accts != nil {
		return
	}
	pol := b.policy()
	n := max(pol.Slots, 1)
	if pol.FixedSlots {
		b.accts = make([]*account, 0, n)
		for i := range n {
			b.accts = append(b.accts, &account{id: strconv.Itoa(pol.FirstID + i)})
		}
	} else {
		b.accts = []*account{{id: strconv.Itoa(pol.FirstID)}}
	}
	a := b.accts[0]
	a.user, a.password, a.role, a.enabled = DefaultUsername, DefaultPassword, RoleAdministrator, true
	a.gen = b.nextPasswordGen()
	if b.sim != nil {
		a.user, a.password = b.sim.cfg.Username, b.sim.cfg.Password
	}
}

// nextPasswordGen numbers a password an account takes. b.mu held.
func (b *bmc) nextPasswordGen() uint64 {
	b.pwGen++
	return b.pwGen
}

// passwordGen is the number of user's current password (0: no such
// account). b.mu held.
func (b *bmc) passwordGen(user string) uint64 {
	if a := b.accountNamed(user); a != nil {
		return a.gen
	}
	return 0
}

// policy is the BMC's account policy. b.mu held.
func (b *bmc) policy() AccountPolicy {
	if b.acctPol != nil {
		return *b.acctPol
	}
	if b.sim != nil && b.sim.cfg.Accounts != nil {
		return *b.sim.cfg.Accounts
	}
	return policyFor(b.prof.name)
}

// accountNamed is the enabled-or-not account of user ("" slots never
// match). b.mu held.
func (b *bmc) accountNamed(user string) *account {
	b.initAccounts()
	for _, a := range b.accts {
		if a.user != "" && a.user == user {
			return a
		}
	}
	return nil
}

func (b *bmc) accountByID(id string) *account {
	b.initAccounts()
	for _, a := range b.accts {
		if a.id == id && (a.user != "" || b.policy().FixedSlots) {
			return a
		}
	}
	return nil
}

// checkLogin checks user and password against the table, counting a
// failure against an existing account (and locking it at the threshold);
// a locked or disabled account is refused whatever the password. ua is
// the client's User-Agent, which State names with each failure and lockout.
// b.mu held.
func (b *bmc) checkLogin(user, password string, now time.Time, ua string) bool {
	a := b.accountNamed(user)
	if a == nil {
		subtle.ConstantTimeCompare([]byte(password), []byte(password))
		return false
	}
	pol := b.policy()
	if !a.locked.IsZero() {
		if pol.LockoutDuration > 0 && now.Sub(a.locked) >= pol.LockoutDuration {
			a.locked, a.failures = time.Time{}, 0
		} else {
			return false
		}
	}
	ok := subtle.ConstantTimeCompare([]byte(password), []byte(a.password)) == 1
	if !ok {
		if b.failedLogins == nil {
			b.failedLogins = map[string]int{}
		}
		b.failedLogins[user+" "+ua]++
		a.failures++
		// The first administrator (the operator's account every BMC
		// starts with) is never locked out, as on BMCs whose built-in
		// administrator is exempt: a client's wrong password costs it a
		// refusal, not the BMC.
		if pol.LockoutThreshold > 0 && a.failures >= pol.LockoutThreshold && a != b.accts[0] {
			a.locked = now
			b.lockouts = append(b.lockouts, Lockout{Account: user, At: now.UTC().Format(time.RFC3339Nano), UserAgent: ua})
		}
		return false
	}
	a.failures = 0
	return a.enabled
}

// roleOf is user's role ("" when there is no such account). b.mu held.
func (b *bmc) roleOf(user string) string {
	if a := b.accountNamed(user); a != nil {
		return a.role
	}
	return ""
}

// checkPassword reports why password breaks the policy ("" when it
// meets it).
func (p AccountPolicy) checkPassword(password string) string {
	n := len([]rune(password))
	if p.MinPasswordLength > 0 && n < p.MinPasswordLength {
		return "the password is shorter than MinPasswordLength " + strconv.Itoa(p.MinPasswordLength)
	}
	if p.MaxPasswordLength > 0 && n > p.MaxPasswordLength {
		return "the password is longer than MaxPasswordLength " + strconv.Itoa(p.MaxPasswordLength)
	}
	has := map[string]bool{}
	for _, r := range password {
		switch {
		case unicode.IsUpper(r):
			has[ClassUpper] = true
		case unicode.IsLower(r):
			has[ClassLower] = true
		case unicode.IsDigit(r):
			has[ClassDigit] = true
		case unicode.IsControl(r) || unicode.IsSpace(r):
			return "the password holds a space or a control character"
		default:
			has[ClassSpecial] = true
		}
	}
	for _, c := range p.RequiredClasses {
		if !has[c] {
			return "the password has no " + c + " character; required classes: " + joinClasses(p.RequiredClasses)
		}
	}
	return ""
}

func joinClasses(cs []string) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += c
	}
	return s
}

func validRole(r string) bool {
	return r == RoleAdministrator || r == RoleOperator || r == RoleReadOnly
}

// accountStates lists the table. b.mu held.
func (b *bmc) accountStates(now time.Time) []AccountState {
	b.initAccounts()
	pol := b.policy()
	out := make([]AccountState, 0, len(b.accts))
	for _, a := range b.accts {
		locked := !a.locked.IsZero() && (pol.LockoutDuration == 0 || now.Sub(a.locked) < pol.LockoutDuration)
		out = append(out, AccountState{ID: a.id, UserName: a.user, RoleID: a.role, Enabled: a.enabled, Locked: locked, Failures: a.failures})
	}
	return out
}

// Accounts returns BMC i's account table (no passwords).
func (s *Sim) Accounts(i int) ([]AccountState, error) {
	if i < 0 || i >= len(s.bmcs) {
		return nil, ErrIndex
	}
	b := s.bmcs[i]
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.accountStates(time.Now()), nil
}

// SetAccountPolicy replaces BMC i's account policy (the table is kept).
func (s *Sim) SetAccountPolicy(i int, p AccountPolicy) error {
	if i < 0 || i >= len(s.bmcs) {
		return ErrIndex
	}
	b := s.bmcs[i]
	b.mu.Lock()
	defer b.mu.Unlock()
	b.initAccounts()
	b.acctPol = &p
	return nil
}
