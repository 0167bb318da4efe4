package bmcsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The AccountService resources, served for every profile in code (no
// fixture holds them): the service, its Accounts and Roles collections,
// and each account. Shapes follow DMTF's AccountService and
// ManagerAccount schemas; FixedSlots follows iDRAC (accounts are slots
// PATCHed into use, POST refused).

const (
	accountService = v1 + "/AccountService"
	accountsPath   = accountService + "/Accounts"
	rolesPath      = accountService + "/Roles"
)

func isAccountPath(p string) bool {
	return p == accountService || strings.HasPrefix(p, accountService+"/")
}

// rootWithAccounts adds the AccountService link to a service root body.
func rootWithAccounts(body []byte) []byte {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return body
	}
	if _, ok := m["AccountService"]; ok {
		return body
	}
	m["AccountService"] = doc{"@odata.id": accountService}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// serveAccounts answers every request under /redfish/v1/AccountService
// by an authenticated user.
func (s *Sim) serveAccounts(w http.ResponseWriter, r *http.Request, b *bmc, pth, user string, body []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.initAccounts()
	now := time.Now()
	role := b.roleOf(user)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.getAccounts(w, b, pth, now)
	case http.MethodPost:
		if pth != accountsPath {
			writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", "POST is not allowed on "+pth)
			return
		}
		if role != RoleAdministrator {
			writeError(w, http.StatusForbidden, "Base.1.0.InsufficientPrivilege", "creating an account needs the Administrator role (ConfigureUsers)")
			return
		}
		b.createAccount(w, body)
	case http.MethodPatch:
		id, ok := strings.CutPrefix(pth, accountsPath+"/")
		a := b.accountByID(id)
		if !ok || a == nil {
			writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no account at "+pth)
			return
		}
		b.patchAccount(w, a, user, role, body)
	case http.MethodDelete:
		id, ok := strings.CutPrefix(pth, accountsPath+"/")
		a := b.accountByID(id)
		switch {
		case !ok || a == nil || a.user == "":
			writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no account at "+pth)
		case role != RoleAdministrator:
			writeError(w, http.StatusForbidden, "Base.1.0.InsufficientPrivilege", "deleting an account needs the Administrator role")
		case a == b.accts[0]:
			writeError(w, http.StatusBadRequest, "Base.1.0.ActionNotSupported", "the first administrator account cannot be deleted")
		default:
			b.clearAccount(a)
			b.mutations++
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", r.Method+" is not allowed on "+pth)
	}
}

func (b *bmc) clearAccount(a *account) {
	if b.policy().FixedSlots {
		*a = account{id: a.id}
		return
	}
	for i, x := range b.accts {
		if x == a {
			b.accts = append(b.accts[:i], b.accts[i+1:]...)
			return
		}
	}
}

func (s *Sim) getAccounts(w http.ResponseWriter, b *bmc, pth string, now time.Time) {
	pol := b.policy()
	switch {
	case pth == accountService:
		classes := pol.RequiredClasses
		if classes == nil {
			classes = []string{}
		}
		writeJSON(w, http.StatusOK, doc{"@odata.id": accountService, "@odata.type": "#AccountService.v1_11_0.AccountService",
			"Id": "AccountService", "Name": "Account Service", "ServiceEnabled": true,
			"MinPasswordLength": pol.MinPasswordLength, "MaxPasswordLength": pol.MaxPasswordLength,
			"AccountLockoutThreshold": pol.LockoutThreshold, "AccountLockoutDuration": int(pol.LockoutDuration / time.Second),
			"AccountLockoutCounterResetAfter": int(pol.LockoutDuration / time.Second),
			"Accounts":                        doc{"@odata.id": accountsPath}, "Roles": doc{"@odata.id": rolesPath},
			"Oem": doc{"Bmcsim": doc{"RequiredCharacterClasses": classes, "MaxAccounts": pol.Slots, "AccountCreation": !pol.NoCreate}}}, "")
	case pth == accountsPath:
		members := []doc{}
		for _, a := range b.accts {
			members = append(members, doc{"@odata.id": accountsPath + "/" + a.id})
		}
		writeJSON(w, http.StatusOK, doc{"@odata.id": accountsPath, "@odata.type": "#ManagerAccountCollection.ManagerAccountCollection",
			"Name": "Accounts Collection", "Members": members, "Members@odata.count": len(members)}, "")
	case pth == rolesPath:
		members := []doc{}
		for _, r := range []string{RoleAdministrator, RoleOperator, RoleReadOnly} {
			members = append(members, doc{"@odata.id": rolesPath + "/" + r})
		}
		writeJSON(w, http.StatusOK, doc{"@odata.id": rolesPath, "@odata.type": "#RoleCollection.RoleCollection",
			"Name": "Roles Collection", "Members": members, "Members@odata.count": len(members)}, "")
	case strings.HasPrefix(pth, rolesPath+"/") && validRole(strings.TrimPrefix(pth, rolesPath+"/")):
		id := strings.TrimPrefix(pth, rolesPath+"/")
		writeJSON(w, http.StatusOK, doc{"@odata.id": pth, "@odata.type": "#Role.v1_3_1.Role", "Id": id, "Name": id + " Role",
			"RoleId": id, "IsPredefined": true, "AssignedPrivileges": privileges(id)}, "")
	case strings.HasPrefix(pth, accountsPath+"/"):
		a := b.accountByID(strings.TrimPrefix(pth, accountsPath+"/"))
		if a == nil {
			writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no account at "+pth)
			return
		}
		locked := !a.locked.IsZero() && (pol.LockoutDuration == 0 || now.Sub(a.locked) < pol.LockoutDuration)
		d := doc{"@odata.id": pth, "@odata.type": "#ManagerAccount.v1_8_0.ManagerAccount", "Id": a.id, "Name": "User Account",
			"UserName": a.user, "RoleId": a.role, "Enabled": a.enabled, "Locked": locked, "Password": nil,
			"AccountTypes": []string{"Redfish"}}
		if a.role != "" {
			d["Links"] = doc{"Role": doc{"@odata.id": rolesPath + "/" + a.role}}
		}
		writeJSON(w, http.StatusOK, d, "")
	default:
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no resource at "+pth)
	}
}

func privileges(role string) []string {
	switch role {
	case RoleAdministrator:
		return []string{"Login", "ConfigureManager", "ConfigureUsers", "ConfigureSelf", "ConfigureComponents"}
	case RoleOperator:
		return []string{"Login", "ConfigureSelf", "ConfigureComponents"}
	}
	return []string{"Login", "ConfigureSelf"}
}

// accountReq is a create or PATCH body.
type accountReq struct {
	UserName *string
	Password *string
	RoleId   *string //nolint:revive // the Redfish property's name
	Enabled  *bool
	Locked   *bool
}

func decodeAccount(w http.ResponseWriter, body []byte) (accountReq, bool) {
	var req accountReq
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", "body must be a ManagerAccount object: "+err.Error())
		return req, false
	}
	if req.RoleId != nil && !validRole(*req.RoleId) {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList",
			"RoleId "+strconv.Quote(*req.RoleId)+" is not one of Administrator, Operator, ReadOnly", "#/RoleId")
		return req, false
	}
	return req, true
}

// createAccount is POST Accounts (Administrator). b.mu held.
func (b *bmc) createAccount(w http.ResponseWriter, body []byte) {
	pol := b.policy()
	if pol.NoCreate || pol.FixedSlots {
		how := "this BMC does not allow creating accounts"
		if pol.FixedSlots && !pol.NoCreate {
			how = "accounts are fixed slots on this BMC: PATCH UserName, Password, RoleId and Enabled into an empty slot"
		}
		writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", how)
		return
	}
	req, ok := decodeAccount(w, body)
	if !ok {
		return
	}
	if req.UserName == nil || *req.UserName == "" || req.Password == nil || req.RoleId == nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.PropertyMissing", "UserName, Password and RoleId are required")
		return
	}
	if b.accountNamed(*req.UserName) != nil {
		writeErrorRelated(w, http.StatusConflict, "Base.1.0.ResourceAlreadyExists", "an account named "+strconv.Quote(*req.UserName)+" exists", "#/UserName")
		return
	}
	if why := pol.checkPassword(*req.Password); why != "" {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.0.PropertyValueFormatError", why, "#/Password")
		return
	}
	if len(b.accts) >= pol.Slots {
		writeError(w, http.StatusBadRequest, "Base.1.0.CreateLimitReachedForResource",
			"the account table is full ("+strconv.Itoa(pol.Slots)+" accounts): delete one first")
		return
	}
	used := map[string]bool{}
	for _, a := range b.accts {
		used[a.id] = true
	}
	id := pol.FirstID
	for used[strconv.Itoa(id)] {
		id++
	}
	a := &account{id: strconv.Itoa(id), user: *req.UserName, password: *req.Password, role: *req.RoleId, enabled: true, gen: b.nextPasswordGen()}
	if req.Enabled != nil {
		a.enabled = *req.Enabled
	}
	notePassword(w, a.user, a.gen)
	b.accts = append(b.accts, a)
	b.mutations++
	loc := accountsPath + "/" + a.id
	w.Header().Set("Location", loc)
	writeJSON(w, http.StatusCreated, doc{"@odata.id": loc, "@odata.type": "#ManagerAccount.v1_8_0.ManagerAccount", "Id": a.id,
		"UserName": a.user, "RoleId": a.role, "Enabled": a.enabled, "Locked": false, "Password": nil}, "")
}

// patchAccount changes an account: an Administrator anything, anyone else
// only its own Password (ConfigureSelf). b.mu held.
func (b *bmc) patchAccount(w http.ResponseWriter, a *account, user, role string, body []byte) {
	req, ok := decodeAccount(w, body)
	if !ok {
		return
	}
	self := a.user != "" && a.user == user
	if role != RoleAdministrator && (!self || req.UserName != nil || req.RoleId != nil || req.Enabled != nil || req.Locked != nil) {
		writeError(w, http.StatusForbidden, "Base.1.0.InsufficientPrivilege",
			"only an Administrator changes other accounts or roles; an account may change its own Password")
		return
	}
	pol := b.policy()
	if a.user == "" && (req.UserName == nil || *req.UserName == "" || req.Password == nil) {
		writeError(w, http.StatusBadRequest, "Base.1.0.PropertyMissing", "an empty slot needs UserName and Password")
		return
	}
	if req.UserName != nil && *req.UserName != a.user {
		if x := b.accountNamed(*req.UserName); x != nil {
			writeErrorRelated(w, http.StatusConflict, "Base.1.0.ResourceAlreadyExists", "an account named "+strconv.Quote(*req.UserName)+" exists", "#/UserName")
			return
		}
	}
	if req.Password != nil {
		if why := pol.checkPassword(*req.Password); why != "" {
			writeErrorRelated(w, http.StatusBadRequest, "Base.1.0.PropertyValueFormatError", why, "#/Password")
			return
		}
	}
	if a == b.accts[0] && ((req.Enabled != nil && !*req.Enabled) || (req.RoleId != nil && *req.RoleId != RoleAdministrator)) {
		writeError(w, http.StatusBadRequest, "Base.1.0.ActionNotSupported", "the first administrator account cannot be disabled or demoted")
		return
	}
	if req.UserName != nil {
		if a.user == "" && req.RoleId == nil {
			a.role = RoleReadOnly
		}
		a.user = *req.UserName
	}
	if req.Password != nil && !pol.KeepOldPassword {
		a.password = *req.Password
		a.failures, a.locked = 0, time.Time{}
		a.gen = b.nextPasswordGen()
		notePassword(w, a.user, a.gen)
	}
	if req.RoleId != nil {
		a.role = *req.RoleId
	}
	if req.Enabled != nil {
		a.enabled = *req.Enabled
	}
	if req.Locked != nil && !*req.Locked {
		a.locked, a.failures = time.Time{}, 0
	}
	b.mutations++
	w.WriteHeader(http.StatusNoContent)
}

// redactPasswords replaces the value of every "Password" in a JSON
// object body (audit lines never hold a password).
func redactPasswords(body []byte) []byte {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		if bytes.Contains(bytes.ToLower(body), []byte("password")) {
			return []byte(`"(not JSON; withheld: may hold a password)"`)
		}
		return body
	}
	changed := false
	for k := range m {
		if strings.EqualFold(k, "Password") {
			m[k] = "(redacted)"
			changed = true
		}
	}
	if !changed {
		return body
	}
	out, _ := json.Marshal(m)
	return out
}

// refuseByRole answers 403 to a mutation the account's role does not
// allow: ReadOnly changes nothing; only an Administrator ends another
// account's session or resets the manager. It reports whether it did.
func (s *Sim) refuseByRole(w http.ResponseWriter, r *http.Request, b *bmc, pth, user string) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	b.mu.Lock()
	role := b.roleOf(user)
	other := false
	if r.Method == http.MethodDelete && b.prof.sessions != "" && strings.HasPrefix(pth, b.prof.sessions+"/") {
		id := strings.TrimPrefix(pth, b.prof.sessions+"/")
		for _, x := range b.sessions {
			other = other || (x.id == id && x.user != user)
		}
	}
	b.mu.Unlock()
	switch {
	case role == RoleAdministrator:
		return false
	case role == RoleReadOnly || role == "":
		writeError(w, http.StatusForbidden, "Base.1.0.InsufficientPrivilege", "account "+strconv.Quote(user)+" has role "+role+", which changes nothing")
		return true
	case other:
		writeError(w, http.StatusForbidden, "Base.1.0.InsufficientPrivilege", "only an Administrator ends another account's session")
		return true
	case strings.HasSuffix(pth, "/Actions/Manager.Reset"):
		writeError(w, http.StatusForbidden, "Base.1.0.InsufficientPrivilege", "resetting the manager needs the Administrator role (ConfigureManager)")
		return true
	}
	return false
}

// serveSimAccounts: GET /sim/accounts lists the table (no passwords) and
// the policy; PUT sets the policy ({"policy": AccountPolicy}).
func (s *Sim) serveSimAccounts(w http.ResponseWriter, r *http.Request, b *bmc) {
	type out struct {
		Policy   AccountPolicy  `json:"policy"`
		Accounts []AccountState `json:"accounts"`
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPut, http.MethodPost:
		var req struct {
			Policy *AccountPolicy `json:"policy"`
		}
		d := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		d.DisallowUnknownFields()
		if err := d.Decode(&req); err != nil || req.Policy == nil || req.Policy.Slots < 1 {
			http.Error(w, `body must be {"policy": {"slots": N (at least 1), "minPasswordLength": …, …}} (AccountPolicy)`, http.StatusBadRequest)
			return
		}
		b.mu.Lock()
		b.initAccounts()
		b.acctPol = req.Policy
		b.mu.Unlock()
	default:
		http.Error(w, "GET or PUT /sim/accounts", http.StatusMethodNotAllowed)
		return
	}
	b.mu.Lock()
	o := out{Policy: b.policy(), Accounts: b.accountStates(time.Now())}
	b.mu.Unlock()
	writeJSON(w, http.StatusOK, o, "")
}
