package bmcsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func req(t *testing.T, method, url string, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "basic" {
			u, p, _ := strings.Cut(v, ":")
			r.SetBasicAuth(u, p)
			continue
		}
		r.Header.Set(k, v)
	}
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestAuthSessionsAndBasic(t *testing.T) {
	sim, err := Start(Config{Hosts: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	u := sim.URL(0)
	sys := u + "/redfish/v1/Systems/1"

	if r, _ := req(t, "GET", u+"/redfish/v1/", "", nil); r.StatusCode != 200 {
		t.Fatalf("service root without auth: %d", r.StatusCode)
	}
	if r, _ := req(t, "GET", sys, "", nil); r.StatusCode != 401 {
		t.Fatalf("system without auth: %d", r.StatusCode)
	}
	if r, _ := req(t, "GET", sys, "", map[string]string{"basic": "admin:nope"}); r.StatusCode != 401 {
		t.Fatalf("system with wrong basic auth: %d", r.StatusCode)
	}
	if r, _ := req(t, "GET", sys, "", map[string]string{"basic": "admin:password"}); r.StatusCode != 200 {
		t.Fatalf("system with basic auth: %d", r.StatusCode)
	}
	if r, _ := req(t, "POST", u+"/redfish/v1/SessionService/Sessions", `{"UserName":"admin","Password":"bad"}`, nil); r.StatusCode != 401 {
		t.Fatalf("login with a wrong password: %d", r.StatusCode)
	}
	r, _ := req(t, "POST", u+"/redfish/v1/SessionService/Sessions", `{"UserName":"admin","Password":"password"}`, nil)
	tok, loc := r.Header.Get("X-Auth-Token"), r.Header.Get("Location")
	if r.StatusCode != 201 || tok == "" || loc == "" {
		t.Fatalf("login: %d token %q location %q", r.StatusCode, tok, loc)
	}
	if r, _ := req(t, "GET", sys, "", map[string]string{"X-Auth-Token": tok}); r.StatusCode != 200 {
		t.Fatalf("system with token: %d", r.StatusCode)
	}
	// The token belongs to BMC 0 only.
	if r, _ := req(t, "GET", sim.URL(1)+"/redfish/v1/Systems/1", "", map[string]string{"X-Auth-Token": tok}); r.StatusCode != 401 {
		t.Fatalf("BMC 0's token on BMC 1: %d", r.StatusCode)
	}
	if r, _ := req(t, "DELETE", u+loc, "", map[string]string{"X-Auth-Token": tok}); r.StatusCode != 204 {
		t.Fatalf("logout: %d", r.StatusCode)
	}
	if r, _ := req(t, "GET", sys, "", map[string]string{"X-Auth-Token": tok}); r.StatusCode != 401 {
		t.Fatalf("token after logout: %d", r.StatusCode)
	}
}

func TestETagAndResetValues(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "a.jsonl")
	sim, err := Start(Config{Hosts: 1, AuditPath: audit})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	sys := sim.URL(0) + "/redfish/v1/Systems/1"
	auth := map[string]string{"basic": "admin:password"}
	r, body := req(t, "GET", sys, "", auth)
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on the system")
	}
	var d struct {
		Actions map[string]struct {
			Target  string   `json:"target"`
			Allowed []string `json:"ResetType@Redfish.AllowableValues"`
		}
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	if a := d.Actions["#ComputerSystem.Reset"]; len(a.Allowed) == 0 || a.Target == "" {
		t.Fatalf("Reset action: %+v", a)
	}
	patch := `{"Boot":{"BootSourceOverrideTarget":"Pxe","BootSourceOverrideEnabled":"Once"}}`
	if r, _ := req(t, "PATCH", sys, patch, map[string]string{"basic": "admin:password", "If-Match": `W/"999"`}); r.StatusCode != 412 {
		t.Fatalf("PATCH with a stale ETag: %d", r.StatusCode)
	}
	if r, _ := req(t, "PATCH", sys, patch, map[string]string{"basic": "admin:password", "If-Match": etag}); r.StatusCode != 204 {
		t.Fatalf("PATCH with the current ETag: %d", r.StatusCode)
	}
	if r, _ := req(t, "PATCH", sys, patch, map[string]string{"basic": "admin:password", "If-Match": etag}); r.StatusCode != 412 {
		t.Fatalf("PATCH with the ETag from before the change: %d", r.StatusCode)
	}
	if r, _ := req(t, "POST", sys+"/Actions/ComputerSystem.Reset", `{"ResetType":"Explode"}`, auth); r.StatusCode != 400 {
		t.Fatalf("Reset with a type outside AllowableValues: %d", r.StatusCode)
	}
	if r, _ := req(t, "PATCH", sys, `{"Boot":{"BootSourceOverrideTarget":"Moon"}}`, auth); r.StatusCode != 400 {
		t.Fatalf("PATCH with a bad target: %d", r.StatusCode)
	}
	st := sim.State(0)
	if st.BootOverride.Target != "Pxe" || st.Mutations != 1 {
		t.Fatalf("state %+v", st)
	}
	b, _ := os.ReadFile(audit)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 {
		t.Fatalf("audit has %d lines; want 5 (one per mutating call, refused ones too):\n%s", len(lines), b)
	}
	var l AuditLine
	if err := json.Unmarshal([]byte(lines[1]), &l); err != nil {
		t.Fatal(err)
	}
	if l.Method != "PATCH" || l.Status != 204 || l.Port != sim.Port(0) || !strings.Contains(l.Body, "Pxe") || l.UserAgent == "" || l.Remote == "" {
		t.Fatalf("audit line %+v", l)
	}
}

func TestFaultAndStateEndpoints(t *testing.T) {
	sim, err := Start(Config{Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	u := sim.URL(0)
	auth := map[string]string{"basic": "admin:password"}
	if r, _ := req(t, "PUT", u+"/sim/fault", `{"mode":"sideways"}`, nil); r.StatusCode != 400 {
		t.Fatalf("bad mode: %d", r.StatusCode)
	}
	if r, _ := req(t, "PUT", u+"/sim/fault", `{"mode":"http500"}`, nil); r.StatusCode != 200 {
		t.Fatalf("set http500: %d", r.StatusCode)
	}
	if r, _ := req(t, "GET", u+"/redfish/v1/Systems/1", "", auth); r.StatusCode != 500 {
		t.Fatalf("with http500: %d", r.StatusCode)
	}
	if r, _ := req(t, "PUT", u+"/sim/fault", `{"mode":"refuse-auth"}`, nil); r.StatusCode != 200 {
		t.Fatal("set refuse-auth")
	}
	if r, _ := req(t, "GET", u+"/redfish/v1/Systems/1", "", auth); r.StatusCode != 401 {
		t.Fatalf("with refuse-auth: %d", r.StatusCode)
	}
	// hang: a request waits until the fault heals, then is answered.
	if r, _ := req(t, "PUT", u+"/sim/fault", `{"mode":"hang"}`, nil); r.StatusCode != 200 {
		t.Fatal("set hang")
	}
	got := make(chan int, 1)
	go func() {
		r, err := http.Get(u + "/redfish/v1/")
		if err != nil {
			got <- -1
			return
		}
		r.Body.Close()
		got <- r.StatusCode
	}()
	select {
	case c := <-got:
		t.Fatalf("request answered (%d) while the BMC hangs", c)
	case <-time.After(300 * time.Millisecond):
	}
	if r, _ := req(t, "PUT", u+"/sim/fault", `{"mode":"none"}`, nil); r.StatusCode != 200 {
		t.Fatal("heal")
	}
	select {
	case c := <-got:
		if c != 200 {
			t.Fatalf("after healing: %d", c)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("hung request not answered within 60s of healing")
	}
	_, b := req(t, "GET", u+"/sim/state", "", nil)
	var st State
	if err := json.Unmarshal(b, &st); err != nil || st.Fault != "none" || st.MAC != sim.MAC(0) || st.Power != "Off" {
		t.Fatalf("state %s: %v", b, err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{{Hosts: 0}, {Hosts: 2, BasePort: 65535}, {Hosts: 1, Latency: -1}} {
		if _, err := Start(c); err == nil {
			t.Errorf("Start(%+v) accepted a bad config", c)
		}
	}
	a, err := Start(Config{Hosts: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := Start(Config{Hosts: 2, BasePort: a.Port(1)}); err == nil {
		t.Error("Start on a port in use succeeded")
	}
	if err := a.SetFault(5, FaultNone); err == nil {
		t.Error("SetFault on a bad index")
	}
	if a.MAC(1) != "52:54:00:00:00:01" {
		t.Errorf("MAC(1) = %s", a.MAC(1))
	}
	var buf bytes.Buffer
	buf.WriteString(summarize([]byte(`{ "a" : 1 }`)))
	if buf.String() != `{"a":1}` {
		t.Errorf("summarize = %s", buf.String())
	}
}

// Latency is a floor on every Redfish answer (jitter only adds); /sim/* is
// never delayed. Only lower bounds are asserted: sleeping cannot be faster.
func TestLatencyFloor(t *testing.T) {
	sim, err := Start(Config{Hosts: 1, Latency: 150 * time.Millisecond, Jitter: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	for i := 0; i < 3; i++ {
		start := time.Now()
		if r, _ := req(t, "GET", sim.URL(0)+"/redfish/v1/", "", nil); r.StatusCode != 200 {
			t.Fatal(r.StatusCode)
		}
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Fatalf("answered in %s with 150ms latency", d)
		}
	}
}
