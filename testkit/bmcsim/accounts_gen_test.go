package bmcsim

import (
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAuditNamesPasswordGeneration: the audit names the credentials each
// accepted mutation used (account and the number of its password; a
// session keeps its login's after the password changed) and the password
// each account change set; State counts lockouts.
func TestAuditNamesPasswordGeneration(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := Start(Config{Hosts: 1, AuditPath: audit})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	do := func(method, pth, body string, auth func(*http.Request)) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, sim.URL(0)+pth, strings.NewReader(body))
		auth(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	basic := func(u, p string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, p) } }
	admin := basic("admin", "password")
	reset := v1 + "/Systems/1/Actions/ComputerSystem.Reset"
	if resp := do("POST", accountsPath, `{"UserName":"op","Password":"op-pass-1","RoleId":"Operator"}`, admin); resp.StatusCode != 201 {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	resp := do("POST", sim.prof.sessions, `{"UserName":"op","Password":"op-pass-1"}`, func(*http.Request) {})
	tok := resp.Header.Get("X-Auth-Token")
	if resp := do("PATCH", accountsPath+"/2", `{"Password":"op-pass-2"}`, admin); resp.StatusCode != 204 {
		t.Fatalf("password change: %d", resp.StatusCode)
	}
	do("POST", reset, `{"ResetType":"ForceOff"}`, func(r *http.Request) { r.Header.Set("X-Auth-Token", tok) })
	do("POST", reset, `{"ResetType":"On"}`, basic("op", "op-pass-2"))
	do("POST", reset, `{"ResetType":"ForceOff"}`, basic("op", "op-pass-1"))
	lines, err := ReadAudit(audit)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, strings.Join([]string{l.Method, l.User, itoa(l.PasswordGen), l.SetAccount, itoa(l.SetPasswordGen), itoa(uint64(l.Status))}, " "))
	}
	want := []string{
		"POST admin 1 op 2 201",  // the account created: its password is number 2
		"PATCH admin 1 op 3 204", // changed: number 3
		"POST op 2  0 204",       // the session logged in with number 2 and keeps it
		"POST op 3  0 204",       // Basic with number 3
		"POST  0  0 401",         // number 2 over Basic: refused
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit (method user gen setAccount setGen status):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for range 5 {
		do("GET", v1+"/Systems/1", "", basic("op", "wrong"))
	}
	if st := sim.State(0); len(st.Lockouts) != 1 || st.Lockouts[0].Account != "op" || st.FailedLogins["op Go-http-client/1.1"] != 5 {
		t.Errorf("after 5 failed logins: lockouts %+v, failed logins %v; want op locked once after 5", st.Lockouts, st.FailedLogins)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
