package bmcsim

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestRedfishtoolAccountService drives the account service with DMTF's
// redfishtool: add an Operator account, use it, change its password (the
// old one is refused), disable it; the audit names the account of each
// mutation and never holds a password.
func TestRedfishtoolAccountService(t *testing.T) {
	bin := testenv.LookPath(t, "redfishtool")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := Start(Config{Hosts: 1, AuditPath: audit})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	host := strings.TrimPrefix(sim.URL(0), "http://")
	run := func(user, pass string, args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"-r", host, "-S", "Never", "-u", user, "-p", pass, "-A", "Basic"}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	}
	must := func(user, pass string, args ...string) string {
		t.Helper()
		out, code := run(user, pass, args...)
		if code != 0 {
			t.Fatalf("redfishtool %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	svc := must("admin", "password", "AccountService")
	if !strings.Contains(svc, `"MinPasswordLength": 8`) || !strings.Contains(svc, `"MaxPasswordLength": 20`) {
		t.Errorf("AccountService lacks the policy:\n%s", svc)
	}
	if out, code := run("admin", "password", "AccountService", "adduser", "rf-tier", "short", "Operator"); code == 0 {
		t.Errorf("a 5-character password was accepted:\n%s", out)
	}
	must("admin", "password", "AccountService", "adduser", "rf-tier", "Tier-pass-1", "Operator")
	if out := must("admin", "password", "AccountService", "Accounts", "list"); !strings.Contains(out, "rf-tier") {
		t.Errorf("Accounts list lacks rf-tier:\n%s", out)
	}
	must("rf-tier", "Tier-pass-1", "Systems", "-I", "1", "reset", "ForceOff")
	if out, code := run("rf-tier", "Tier-pass-1", "AccountService", "adduser", "x", "Xx-pass-123"); code == 0 {
		t.Errorf("an Operator created an account:\n%s", out)
	}
	must("admin", "password", "AccountService", "setpassword", "rf-tier", "Tier-pass-2")
	if _, code := run("rf-tier", "Tier-pass-1", "Systems", "-I", "1", "reset", "On"); code == 0 {
		t.Error("the old password still works after setpassword")
	}
	must("rf-tier", "Tier-pass-2", "Systems", "-I", "1", "reset", "On")
	must("admin", "password", "AccountService", "useradmin", "rf-tier", "disable")
	if _, code := run("rf-tier", "Tier-pass-2", "Systems", "-I", "1", "reset", "ForceOff"); code == 0 {
		t.Error("a disabled account still works")
	}
	if st := sim.State(0); st.Power != "On" {
		t.Errorf("power %s: a refused reset changed the host", st.Power)
	}
	lines, err := ReadAudit(audit)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]int{}
	for _, l := range lines {
		if strings.Contains(l.Body, "Tier-pass") || strings.Contains(l.Body, "short") {
			t.Errorf("audit line holds a password: %+v", l)
		}
		users[l.User+" "+strconv.Itoa(l.Status)]++
	}
	if users["rf-tier 204"] != 2 || users["rf-tier 403"] != 1 || users["admin 201"] != 1 {
		t.Errorf("audit by account and status: %v", users)
	}
}

// TestAccountPolicyLockoutAndSlots: a full table, a password against the
// policy, lockout after repeated failures (unlocked by an admin), a PATCH
// the BMC answers but does not apply, and iDRAC's fixed slots.
func TestAccountPolicyLockoutAndSlots(t *testing.T) {
	sim, err := Start(Config{Hosts: 1, Accounts: &AccountPolicy{Slots: 2, FirstID: 1, MinPasswordLength: 10,
		MaxPasswordLength: 16, RequiredClasses: []string{ClassDigit, ClassSpecial}, LockoutThreshold: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	base := sim.URL(0)
	call := func(method, pth, user, pass, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+pth, strings.NewReader(body))
		req.SetBasicAuth(user, pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := call("POST", accountsPath, "admin", "password", `{"UserName":"t","Password":"abcdefghijk","RoleId":"Operator"}`); code != 400 || !strings.Contains(body, "digit") {
		t.Errorf("password without a digit: %d %s", code, body)
	}
	if code, body := call("POST", accountsPath, "admin", "password", `{"UserName":"t","Password":"abc-defgh1jk","RoleId":"Operator"}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := call("POST", accountsPath, "admin", "password", `{"UserName":"u","Password":"abc-defgh1jk","RoleId":"Operator"}`); code != 400 || !strings.Contains(body, "CreateLimitReachedForResource") {
		t.Errorf("create in a full table: %d %s", code, body)
	}
	for range 2 {
		if code, _ := call("GET", v1+"/Systems/1", "t", "wrong", ""); code != 401 {
			t.Fatalf("wrong password: %d", code)
		}
	}
	if code, _ := call("GET", v1+"/Systems/1", "t", "abc-defgh1jk", ""); code != 401 {
		t.Errorf("a locked account logged in: %d", code)
	}
	if acc, _ := sim.Accounts(0); !acc[1].Locked {
		t.Errorf("accounts after 2 failures: %+v", acc)
	}
	if code, body := call("PATCH", accountsPath+"/2", "admin", "password", `{"Locked":false}`); code != 204 {
		t.Fatalf("unlock: %d %s", code, body)
	}
	if code, _ := call("GET", v1+"/Systems/1", "t", "abc-defgh1jk", ""); code != 200 {
		t.Errorf("after unlock: %d", code)
	}
	// An account changes its own password (ConfigureSelf), not its role.
	if code, body := call("PATCH", accountsPath+"/2", "t", "abc-defgh1jk", `{"Password":"new-pass-123"}`); code != 204 {
		t.Fatalf("self password change: %d %s", code, body)
	}
	if code, _ := call("PATCH", accountsPath+"/2", "t", "new-pass-123", `{"RoleId":"Administrator"}`); code != 403 {
		t.Errorf("an Operator promoted itself: %d", code)
	}
	pol := AccountPolicy{Slots: 2, FirstID: 1, MinPasswordLength: 8, MaxPasswordLength: 20, KeepOldPassword: true}
	if err := sim.SetAccountPolicy(0, pol); err != nil {
		t.Fatal(err)
	}
	if code, _ := call("PATCH", accountsPath+"/2", "admin", "password", `{"Password":"other-pass-1"}`); code != 204 {
		t.Errorf("PATCH on a BMC keeping the old password: %d", code)
	}
	if code, _ := call("GET", v1+"/Systems/1", "t", "other-pass-1", ""); code != 401 {
		t.Errorf("the unapplied password works: %d", code)
	}

	idrac, err := Start(Config{Hosts: 1, Profile: "idrac"})
	if err != nil {
		t.Fatal(err)
	}
	defer idrac.Close()
	base = idrac.URL(0)
	if code, _ := call("POST", accountsPath, "admin", "password", `{"UserName":"t","Password":"Abc-defg1","RoleId":"Operator"}`); code != 405 {
		t.Errorf("POST on fixed slots: %d", code)
	}
	if code, body := call("PATCH", accountsPath+"/3", "admin", "password", `{"UserName":"t","Password":"Abc-defg1","RoleId":"Operator","Enabled":true}`); code != 204 {
		t.Fatalf("PATCH an empty slot: %d %s", code, body)
	}
	if code, _ := call("GET", v1, "t", "Abc-defg1", ""); code != 200 {
		t.Errorf("login with the slot's account: %d", code)
	}
	if acc, _ := idrac.Accounts(0); len(acc) != 15 || acc[0].ID != "2" || acc[1].UserName != "t" {
		t.Errorf("iDRAC table: %+v", acc)
	}
}

// TestSessionsEndAndCarryTheirAccount: a session of another account is
// listed with its UserName; DELETE by an admin ends it and its token is
// refused 401 from then on; an Operator may not end an admin's session.
func TestSessionsEndAndCarryTheirAccount(t *testing.T) {
	sim, err := Start(Config{Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	base := sim.URL(0)
	do := func(method, pth, body string, auth func(*http.Request)) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+pth, strings.NewReader(body))
		auth(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	admin := func(r *http.Request) { r.SetBasicAuth("admin", "password") }
	none := func(*http.Request) {}
	if resp, body := do("POST", accountsPath, `{"UserName":"op","Password":"op-pass-123","RoleId":"Operator"}`, admin); resp.StatusCode != 201 {
		t.Fatalf("create: %s", body)
	}
	resp, body := do("POST", sim.prof.sessions, `{"UserName":"op","Password":"op-pass-123"}`, none)
	if resp.StatusCode != 201 {
		t.Fatalf("login: %d %s", resp.StatusCode, body)
	}
	tok, loc := resp.Header.Get("X-Auth-Token"), resp.Header.Get("Location")
	withTok := func(r *http.Request) { r.Header.Set("X-Auth-Token", tok) }
	if resp, body := do("GET", loc, "", admin); resp.StatusCode != 200 || !strings.Contains(body, `"UserName":"op"`) {
		t.Errorf("GET %s: %d %s", loc, resp.StatusCode, body)
	}
	resp, _ = do("POST", sim.prof.sessions, `{"UserName":"admin","Password":"password"}`, none)
	adminLoc := resp.Header.Get("Location")
	if resp, _ := do("DELETE", adminLoc, "", withTok); resp.StatusCode != 403 {
		t.Errorf("an Operator ended an admin's session: %d", resp.StatusCode)
	}
	if resp, _ := do("DELETE", loc, "", admin); resp.StatusCode != 204 {
		t.Fatalf("DELETE %s: %d", loc, resp.StatusCode)
	}
	if resp, _ := do("POST", v1+"/Systems/1/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, withTok); resp.StatusCode != 401 {
		t.Errorf("an ended session's token: %d", resp.StatusCode)
	}
	if st := sim.State(0); st.Power != "Off" || st.Sessions != 1 {
		t.Errorf("after the ended session's reset: %+v", st)
	}
}
