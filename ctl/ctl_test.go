package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// opT0 is when r1-h01's reported operations started.
var opT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// TestAgainstCoordinator runs rackfencectl against one real coordinator
// process; a fake agent (the real API with an agent token) reports what
// the tests need. Subtests run in order and build on each other.
func TestAgainstCoordinator(t *testing.T) {
	c := startCoordinator(t)
	ctx := context.Background()

	t.Run("apply", func(t *testing.T) {
		r := c.mustCtl(t, "", "host", "apply", "-f", "testdata/hosts.yaml")
		golden(t, "apply.txt", r.stdout)
	})

	ag := c.agent(t, "r1", "agent-r1-test")
	ag.report(t, "r1-h01", wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK, PoweredOn: true,
		ProvisioningID: "p-1", HardwareDetails: &wire.HardwareDetails{Manufacturer: "Sim", Model: "R1", MemoryMiB: 65536, CPUs: []wire.CPU{{Cores: 8}}, NICs: []wire.NIC{{MAC: "52:54:00:00:01:01"}}},
		BMCDetails: &wire.BMCDetails{Protocol: "redfish", RedfishVersion: "1.11.0", Vendor: "Rackfence", Model: "SimBMC", FirmwareVersion: "2.0.0",
			Auth: "session", System: "/redfish/v1/Systems/1", Manager: "/redfish/v1/Managers/1",
			VirtualMedia: "/redfish/v1/Managers/1/VirtualMedia/CD1", VirtualMediaMethod: "actions", BootModes: []string{"UEFI", "Legacy"}},
		OperationHistory: &wire.OperationHistory{
			Register:  wire.OperationMetric{Start: opT0, End: opT0.Add(1200 * time.Millisecond)},
			Inspect:   wire.OperationMetric{Start: opT0.Add(2 * time.Second), End: opT0.Add(6200 * time.Millisecond)},
			Provision: wire.OperationMetric{Start: opT0.Add(time.Minute), End: opT0.Add(4*time.Minute + 5*time.Second)}}}, false)
	ag.report(t, "r1-h02", wire.HostStatus{ProvisioningState: wire.StateUnmanaged, OperationalStatus: wire.OpDiscovered}, false)
	ag.report(t, "r1-h03", wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpError,
		ErrorType: wire.ErrRegistration, ErrorMessage: "ipmi 127.0.0.1:9623: no answer", ErrorCount: 2}, false)

	t.Run("golden", func(t *testing.T) {
		golden(t, "host-list.txt", c.mustCtl(t, "", "host", "list").stdout)
		golden(t, "host-list-r1-json.txt", c.mustCtl(t, "", "host", "list", "--rack", "r1", "-o", "json").stdout)
		golden(t, "host-get.txt", c.mustCtl(t, "", "host", "get", "r1-h01").stdout)
		golden(t, "host-get-error.txt", c.mustCtl(t, "", "host", "get", "r1-h03").stdout)
		golden(t, "host-get-yaml.txt", c.mustCtl(t, "", "host", "get", "r1-h01", "-o", "yaml").stdout)
		golden(t, "rack-list.txt", reRackEpoch.ReplaceAllString(c.mustCtl(t, "", "rack", "list").stdout, "${1}N${3}"))
		golden(t, "host-list-available.txt", c.mustCtl(t, "", "host", "list", "--state", "available").stdout)
	})

	t.Run("apply round-trip", func(t *testing.T) {
		for _, format := range []string{"yaml", "json"} {
			before := c.mustCtl(t, "", "host", "get", "r1-h01", "-o", format).stdout
			r := c.mustCtl(t, before, "host", "apply", "-f", "-")
			if r.stdout != "host/r1-h01 configured\n" {
				t.Errorf("%s apply printed %q", format, r.stdout)
			}
			after := c.mustCtl(t, "", "host", "get", "r1-h01", "-o", format).stdout
			if before != after {
				t.Errorf("%s round trip changed the host:\n--- before\n%s--- after\n%s", format, before, after)
			}
		}
		// A list applies back too.
		list := c.mustCtl(t, "", "host", "list", "--rack", "r1", "-o", "yaml").stdout
		r := c.mustCtl(t, list, "host", "apply", "-f", "-")
		if strings.Count(r.stdout, "configured") != 3 {
			t.Errorf("list apply: %s", r)
		}
	})

	t.Run("exit codes", func(t *testing.T) {
		dead := "http://127.0.0.1:" + itoa(testenv.FreePort(t, "127.0.0.1"))
		cases := []struct {
			name string
			env  map[string]string
			args []string
			code int
			want []string // substrings of stderr
		}{
			{"ok", nil, []string{"host", "list"}, ExitOK, nil},
			{"bad token", map[string]string{"RACKFENCE_TOKEN": "nope"}, []string{"host", "list"}, ExitFailed, []string{"401", "admin.token", "RACKFENCE_TOKEN"}},
			{"no token", map[string]string{"RACKFENCE_TOKEN_FILE": ""}, []string{"host", "list"}, ExitFailed, []string{"no token was given", "--token-file"}},
			{"mode outside its set, no request", map[string]string{"RACKFENCE_COORDINATOR": dead}, []string{"drain", "r1-h01", "--mode", "sideways"}, ExitUsage, []string{`"sideways" is not a drain mode`}},
			{"unknown flag", nil, []string{"host", "list", "--colour"}, ExitUsage, []string{"unknown flag: --colour"}},
			{"bad output", nil, []string{"host", "list", "-o", "xml"}, ExitUsage, []string{`-o "xml"`}},
			{"unknown command", nil, []string{"frobnicate"}, ExitUsage, []string{"unknown command"}},
			{"two names", nil, []string{"host", "get", "a", "b"}, ExitUsage, []string{"exactly one NAME"}},
			{"bad state", nil, []string{"host", "list", "--state", "sleeping"}, ExitUsage, []string{`--state "sleeping"`, "use one of"}},
			{"pivot without --to", map[string]string{"RACKFENCE_COORDINATOR": dead}, []string{"pivot", "r1-h01"}, ExitUsage, []string{"--to"}},
			{"pivot names and rack", map[string]string{"RACKFENCE_COORDINATOR": dead}, []string{"pivot", "r1-h01", "--rack", "r1", "--to", "b"}, ExitUsage, []string{"not both"}},
			{"bad role", nil, []string{"token", "create", "--role", "root"}, ExitUsage, []string{"not a role"}},
			{"not found", nil, []string{"host", "get", "r9-h99"}, ExitNotFound, []string{"does not exist", "host list"}},
			{"not found intent", nil, []string{"detach", "r9-h99"}, ExitNotFound, nil},
			{"unreachable", map[string]string{"RACKFENCE_COORDINATOR": dead}, []string{"host", "list"}, ExitUnreachable, []string{dead, "--coordinator", "RACKFENCE_COORDINATOR"}},
		}
		for _, tc := range cases {
			// The CA file, so a bad or missing token still reaches the
			// server (a bare token pins no CA).
			env := map[string]string{"RACKFENCE_COORDINATOR": c.url, "RACKFENCE_TOKEN_FILE": c.tokenFile,
				"RACKFENCE_CA_FILE": filepath.Join(filepath.Dir(c.tokenFile), "tls", "ca.crt")}
			for k, v := range tc.env {
				env[k] = v
			}
			r := runCtl(t, env, "", nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("%s: rackfencectl %v: want exit %d, got %s", tc.name, tc.args, tc.code, r)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, r.stderr)
				}
			}
		}
		// Conflict (4): a host cannot move to another rack.
		moved := strings.Replace(c.mustCtl(t, "", "host", "get", "r1-h02", "-o", "yaml").stdout, "rack: r1", "rack: r2", 1)
		if r := c.ctl(t, moved, "host", "apply", "-f", "-"); r.code != ExitConflict || !strings.Contains(r.stderr, "cannot move") {
			t.Errorf("rack move: want exit 4, got %s", r)
		}
	})

	t.Run("refusal past the point of no return", func(t *testing.T) {
		c.mustCtl(t, "", "drain", "r1-h03", "--mode", "removal", "--force")
		ag.report(t, "r1-h03", wire.HostStatus{ProvisioningState: wire.StateDeleting, OperationalStatus: wire.OpRemoving,
			Extra: map[string]string{"removalCommitted": "true"}}, true)
		r := c.ctl(t, "", "restore", "r1-h03")
		if r.code != ExitConflict || !strings.Contains(r.stderr, "only deleted") || strings.Contains(r.stderr, "held by") {
			t.Fatalf("restore past the point of no return: want exit 4 saying why, without the unrelated lease holder, got %s", r)
		}
		// Finish the removal as the agent would (unless the coordinator
		// already did).
		err := ag.cl.ReportStatus(ctx, "r1-h03", wire.StatusReport{Epoch: ag.epoch, Remove: true,
			Status: wire.HostStatus{ProvisioningState: wire.StateDeleting, OperationalStatus: wire.OpRemoving}})
		if err != nil && !client.IsNotFound(err) {
			t.Fatal(err)
		}
	})

	t.Run("drain removal --wait", func(t *testing.T) {
		c.mustCtl(t, "name: r1-h09\nrack: r1\n", "host", "apply", "-f", "-")
		done := runAsync(t, c, "", "drain", "r1-h09", "--mode", "removal", "--force", "--wait", "--timeout", "2m")
		waitIntent(t, c, "r1-h09", func(in *wire.Intents) bool { return in != nil && in.Drain != nil })
		ag.report(t, "r1-h09", wire.HostStatus{ProvisioningState: wire.StateDeleting, OperationalStatus: wire.OpRemoving}, true,
			func(r *wire.StatusReport) { r.Remove = true })
		r := <-done
		if r.code != 0 || !strings.Contains(r.stdout, "drain (removal) done") {
			t.Fatalf("removal wait: %s", r)
		}
		if _, err := c.admin.GetHost(ctx, "r1-h09"); !client.IsNotFound(err) {
			t.Fatalf("removed host still there: %v", err)
		}
	})

	t.Run("detach and attach --wait", func(t *testing.T) {
		done := runAsync(t, c, "", "detach", "r1-h01", "--reason", "move to site B", "--wait", "--timeout", "2m")
		waitIntent(t, c, "r1-h01", func(in *wire.Intents) bool { return in != nil && in.Detach != nil })
		ag.report(t, "r1-h01", wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpDetached, PoweredOn: true}, true)
		r := <-done
		if r.code != 0 || !strings.Contains(r.stdout, "detach done: 1 host(s) detached") || !strings.Contains(r.stdout, "r1-h01: detach requested") {
			t.Fatalf("detach --wait: %s", r)
		}
		h, _ := c.admin.GetHost(ctx, "r1-h01")
		if h.Intents.Detach.Reason != "move to site B" {
			t.Errorf("reason not stored: %+v", h.Intents.Detach)
		}

		done = runAsync(t, c, "", "attach", "r1-h01", "--wait", "--timeout", "2m")
		waitIntent(t, c, "r1-h01", func(in *wire.Intents) bool { return in == nil || in.Detach == nil })
		ag.report(t, "r1-h01", wire.HostStatus{ProvisioningState: wire.StateExternallyProvisioned, OperationalStatus: wire.OpOK, PoweredOn: true}, false)
		if r := <-done; r.code != 0 || !strings.Contains(r.stdout, "attach done") {
			t.Fatalf("attach --wait: %s", r)
		}
	})

	t.Run("drain --wait failure", func(t *testing.T) {
		done := runAsync(t, c, "", "drain", "r1-h01", "--mode", "maintenance", "--wait", "--timeout", "2m")
		waitIntent(t, c, "r1-h01", func(in *wire.Intents) bool { return in != nil && in.Drain != nil })
		ag.report(t, "r1-h01", wire.HostStatus{ProvisioningState: wire.StateExternallyProvisioned, OperationalStatus: wire.OpError,
			ErrorType: wire.ErrPowerManagement, ErrorMessage: "BMC answered 500", ErrorCount: 1}, false)
		r := <-done
		if r.code != ExitFailed || !strings.Contains(r.stderr, "drain (maintenance) failed for 1 of 1") ||
			!strings.Contains(r.stderr, "BMC answered 500") || !strings.Contains(r.stderr, "resume") {
			t.Fatalf("drain failure: %s", r)
		}
		// The error appeared in the progress as it happened.
		if !strings.Contains(r.stdout, "FAILED: power management error") {
			t.Errorf("progress lacks the error:\n%s", r.stdout)
		}
		c.mustCtl(t, "", "restore", "r1-h01")
	})

	t.Run("wait timeout, plain and live", func(t *testing.T) {
		ag2 := c.agent(t, "r2", "agent-r2-test")
		ag2.report(t, "r2-h01", wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK}, false)
		r := c.ctl(t, "", "detach", "--rack", "r2", "--wait", "--timeout", "2s")
		if !strings.Contains(r.stderr, "a detach waits for provisioned") {
			t.Errorf("the timeout does not say why the detach waits: %s", r)
		}
		if err := ag2.cl.ReleaseLease(ctx, "r2", wire.LeaseRequest{Holder: "agent-r2-test", Epoch: ag2.epoch}); err != nil {
			t.Fatal(err)
		}
		if r.code != ExitFailed || !strings.Contains(r.stderr, "timed out after 2s waiting for detach") ||
			!strings.Contains(r.stderr, "r2-h01") || !strings.Contains(r.stdout, "] r2-h01: ") {
			t.Fatalf("timeout: %s", r)
		}
		if strings.Contains(r.stdout, "\x1b[") {
			t.Errorf("escape sequences when not on a terminal:\n%q", r.stdout)
		}
		env := map[string]string{"RACKFENCE_COORDINATOR": c.url, "RACKFENCE_TOKEN_FILE": c.tokenFile}
		live := runCtl(t, env, "", func(io *IO) {
			io.IsTerminal = func(any) bool { return true }
			io.Width = func(any) int { return 80 }
		}, "detach", "r2-h01", "--wait", "--timeout", "2500ms")
		if live.code != ExitFailed || !strings.Contains(live.stdout, "\x1b[") || !strings.Contains(live.stdout, "detach: 0/1 done") {
			t.Fatalf("live timeout: %q", live.stdout+live.stderr)
		}
		for _, l := range strings.Split(live.stdout, "\n") {
			if n := len([]rune(stripANSI(l))); n > 80 {
				t.Errorf("live line of %d columns: %q", n, l)
			}
		}
	})

	t.Run("rack forms", func(t *testing.T) {
		r := c.mustCtl(t, "", "drain", "--rack", "r1", "--mode", "maintenance", "--reason", "power work")
		if !strings.Contains(r.stdout, "r1-h01: drain (maintenance) requested") || !strings.Contains(r.stdout, "r1-h02: drain (maintenance) requested") {
			t.Errorf("drain --rack: %s", r)
		}
		c.mustCtl(t, "", "restore", "--rack", "r1")
		l, _ := c.admin.ListHosts(ctx, client.HostFilter{Rack: "r1"})
		for _, h := range l.Items {
			if h.Intents != nil && h.Intents.Drain != nil {
				t.Errorf("%s still drained", h.Name)
			}
		}
		if r := c.ctl(t, "", "detach", "r1-h01", "--rack", "r1"); r.code != ExitUsage {
			t.Errorf("names and --rack: %s", r)
		}
	})

	// A refused host among several: the others' intents still print with
	// -o json, then the command fails naming the refusal.
	t.Run("refused among several with -o json", func(t *testing.T) {
		r := c.ctl(t, "", "-o", "json", "resume", "r1-h02", "r9-h99")
		if r.code != ExitNotFound || !strings.Contains(r.stdout, `"r1-h02"`) || strings.Contains(r.stdout, "r9-h99") ||
			!strings.Contains(r.stderr, "1 of 2 hosts refused") {
			t.Errorf("resume of a host and a missing one: %s", r)
		}
	})

	t.Run("events and follow", func(t *testing.T) {
		ev := func(reason string) func(*wire.StatusReport) {
			return func(r *wire.StatusReport) {
				r.Events = []wire.Event{{Time: time.Now().UTC(), Type: wire.EventNormal, Reason: reason, Message: "from the test agent"}}
			}
		}
		ag.report(t, "r1-h02", wire.HostStatus{ProvisioningState: wire.StateUnmanaged, OperationalStatus: wire.OpDiscovered}, false, ev("Registered"))
		r := c.mustCtl(t, "", "events", "r1-h02")
		golden(t, "events.txt", r.stdout)
		done := runAsync(t, c, "", "events", "r1-h02", "--follow", "--timeout", "8s")
		// The new event is reported once the follow loop runs (it has shown
		// the first batch), so only following can pick it up.
		testenv.WaitBlocked(t, 30*time.Second, "ctl.(*Ctx).followEvents")
		ag.report(t, "r1-h02", wire.HostStatus{ProvisioningState: wire.StateUnmanaged, OperationalStatus: wire.OpDiscovered}, false, ev("Followed"))
		f := <-done
		if f.code != 0 || !strings.Contains(f.stdout, "Registered") || !strings.Contains(f.stdout, "Followed") || strings.Count(f.stdout, "Registered") != 1 {
			t.Fatalf("follow: %s", f)
		}
	})

	t.Run("follow json and watch", func(t *testing.T) {
		done := runAsync(t, c, "", "events", "r1-h02", "--follow", "-o", "json", "--timeout", "3s")
		f := <-done
		lines := strings.Split(strings.TrimSpace(f.stdout), "\n")
		var ev wire.Event
		if f.code != 0 || len(lines) < 2 || json.Unmarshal([]byte(lines[len(lines)-1]), &ev) != nil || ev.Reason != "Followed" {
			t.Errorf("follow -o json (one event per line): %s", f)
		}
		w := c.mustCtl(t, "", "host", "list", "--watch", "--rack", "r1", "--timeout", "3s", "--interval", "500ms")
		if strings.Count(w.stdout, "NAME    RACK") != 1 || !strings.Contains(w.stdout, "agent-r1-test") || !strings.Contains(w.stdout, "hosts:") {
			t.Errorf("watch not on a terminal prints the view once while nothing changes: %s", w)
		}
	})

	t.Run("credentials and tokens", func(t *testing.T) {
		r := c.mustCtl(t, "s3cret-pw\n", "credentials", "set", "r1-bmc", "--username", "admin", "--password-file", "-")
		if strings.Contains(r.stdout+r.stderr, "s3cret-pw") {
			t.Fatal("password echoed")
		}
		g := c.mustCtl(t, "", "credentials", "get", "r1-bmc", "-o", "json")
		var cr wire.Credentials
		if err := json.Unmarshal([]byte(g.stdout), &cr); err != nil || cr.Username != "admin" || cr.Password != "" || strings.Contains(g.stdout, "s3cret") {
			t.Fatalf("credentials get: %s (%v)", g, err)
		}
		if r := c.ctl(t, "", "credentials", "set", "r1-bmc", "--username", "admin"); r.code != ExitUsage || !strings.Contains(r.stderr, "--password-file") {
			t.Errorf("no password source: %s", r)
		}
		tok := strings.TrimSpace(c.mustCtl(t, "", "token", "create", "--role", "viewer").stdout)
		env := map[string]string{"RACKFENCE_COORDINATOR": c.url, "RACKFENCE_TOKEN": tok}
		if r := runCtl(t, env, "", nil, "host", "list"); r.code != 0 {
			t.Errorf("viewer list: %s", r)
		}
		if r := runCtl(t, env, "", nil, "detach", "r1-h01"); r.code != ExitFailed || !strings.Contains(r.stderr, "role") {
			t.Errorf("viewer detach: want exit 1 naming the role, got %s", r)
		}
	})

	t.Run("token lifecycle and audit", func(t *testing.T) {
		r := c.mustCtl(t, "", "token", "create", "--role", "agent", "--rack", "r7", "--ttl", "2h", "--name", "agent-r7-ci")
		tok := strings.TrimSpace(r.stdout)
		if strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stderr, "agent-r7-ci") || !strings.Contains(r.stderr, "expires ") || strings.Contains(r.stderr, tok) {
			t.Fatalf("create prints only the token on stdout, id and expiry on stderr: %s", r)
		}
		var created wire.TokenResponse
		j := c.mustCtl(t, "", "token", "create", "--role", "viewer", "-o", "json")
		if err := json.Unmarshal([]byte(j.stdout), &created); err != nil || created.ID == "" || created.Token == "" || !created.ExpiresAt.IsZero() {
			t.Fatalf("create -o json: %s (%v)", j, err)
		}
		var l wire.List[wire.Token]
		lj := c.mustCtl(t, "", "token", "list", "-o", "json")
		if err := json.Unmarshal([]byte(lj.stdout), &l); err != nil || strings.Contains(lj.stdout, tok) || strings.Contains(lj.stdout, created.Token) {
			t.Fatalf("list -o json: %s (%v)", lj, err)
		}
		var agentID string
		for _, k := range l.Items {
			if k.Name == "agent-r7-ci" {
				agentID = k.ID
				if k.Rack != "r7" || k.ExpiresAt.IsZero() {
					t.Errorf("listed %+v", k)
				}
			}
		}
		tbl := c.mustCtl(t, "", "token", "list").stdout
		if !strings.Contains(tbl, "ID") || !strings.Contains(tbl, "LAST-USED") || !strings.Contains(tbl, agentID) || !strings.Contains(tbl, "never") {
			t.Errorf("list table:\n%s", tbl)
		}
		// YAML quotes an ID of decimal digits only ("3217263247405853").
		if y := c.mustCtl(t, "", "token", "list", "-o", "yaml").stdout; !strings.Contains(y, "id: "+agentID) && !strings.Contains(y, `id: "`+agentID+`"`) {
			t.Errorf("list yaml:\n%s", y)
		}
		if r := c.mustCtl(t, "", "token", "revoke", agentID); !strings.Contains(r.stdout, agentID+" (agent-r7-ci, role agent, rack r7) revoked") {
			t.Errorf("revoke: %s", r)
		}
		if r := c.ctl(t, "", "token", "revoke", agentID); r.code != ExitNotFound || !strings.Contains(r.stderr, "token list") {
			t.Errorf("revoke twice: want exit 3, got %s", r)
		}
		if r := c.ctl(t, "", "token", "revoke", "nope"); r.code != ExitUsage {
			t.Errorf("revoke a bad id: want exit 2, got %s", r)
		}
		if r := c.ctl(t, "", "token", "create", "--role", "viewer", "--ttl", "soon"); r.code != ExitUsage {
			t.Errorf("bad --ttl: want exit 2, got %s", r)
		}
		env := map[string]string{"RACKFENCE_COORDINATOR": c.url, "RACKFENCE_TOKEN": created.Token}
		if r := runCtl(t, env, "", nil, "token", "list"); r.code != ExitFailed || !strings.Contains(r.stderr, "403") {
			t.Errorf("viewer token list: %s", r)
		}
		// The bootstrap token is the last admin one: refused, exit 4, with a hint.
		for _, k := range l.Items {
			if k.Role == wire.RoleAdmin {
				if r := c.ctl(t, "", "token", "revoke", k.ID); r.code != ExitConflict || !strings.Contains(r.stderr, "token create --role admin") {
					t.Errorf("revoke the last admin token: want exit 4 with a hint, got %s", r)
				}
			}
		}
		a := c.mustCtl(t, "", "audit", "--limit", "3", "-o", "json")
		var al wire.List[wire.AuditRecord]
		if err := json.Unmarshal([]byte(a.stdout), &al); err != nil || len(al.Items) != 3 || al.Items[0].Route != "/v1/tokens/:id" || al.Items[0].Code != 409 {
			t.Fatalf("audit -o json: %s (%v)", a, err)
		}
		if a := c.mustCtl(t, "", "audit"); !strings.Contains(a.stdout, "ACTOR") || !strings.Contains(a.stdout, "/v1/tokens/:id") {
			t.Errorf("audit table: %s", a)
		}
		if r := c.ctl(t, "", "audit", "--limit", "-1"); r.code != ExitUsage {
			t.Errorf("audit --limit -1: %s", r)
		}
	})

	t.Run("secrets rotation: keygen, SIGHUP, reencrypt", func(t *testing.T) {
		status := func() wire.SecretsStatus {
			t.Helper()
			var st wire.SecretsStatus
			r := c.mustCtl(t, "", "secrets", "status", "-o", "json")
			if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
				t.Fatalf("secrets status: %s (%v)", r, err)
			}
			return st
		}
		before := status()
		if before.Primary == "" || len(before.Keys) != 1 || before.Credentials == 0 || before.Keys[0].Credentials != before.Credentials || before.Plaintext != 0 {
			t.Fatalf("status before rotation: %+v", before)
		}
		if r := c.ctl(t, "", "secrets", "keygen"); r.code != ExitUsage {
			t.Errorf("keygen without --key-file: %s", r)
		}
		keyFile := filepath.Join(c.dir, "secrets.key")
		r := c.mustCtl(t, "", "secrets", "keygen", "--key-file", keyFile, "-o", "json")
		var kg struct {
			Primary string   `json:"primary"`
			Keys    []string `json:"keys"`
			Created bool     `json:"created"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &kg); err != nil || kg.Created || len(kg.Keys) != 2 || kg.Keys[0] != before.Primary || kg.Primary == before.Primary {
			t.Fatalf("keygen: %s (%v)", r, err)
		}
		if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("key file mode after keygen: %v %v", fi.Mode(), err)
		}
		if err := c.proc.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, "SIGHUP reloads the key file", func() error {
			if st := status(); st.Primary != kg.Primary {
				return fmt.Errorf("primary still %s", st.Primary)
			}
			return nil
		})
		var res wire.ReencryptResult
		r = c.mustCtl(t, "", "secrets", "reencrypt", "-o", "json")
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Resealed != before.Credentials || res.Primary != kg.Primary || len(res.Failed) != 0 {
			t.Fatalf("reencrypt: %s (%v)", r, err)
		}
		after := status()
		if len(after.Keys) != 2 || after.Keys[0].Credentials != 0 || after.Keys[1].Credentials != before.Credentials {
			t.Fatalf("status after reencrypt: %+v", after)
		}
		if tbl := c.mustCtl(t, "", "secrets", "status").stdout; !strings.Contains(tbl, "IN KEY FILE") || !strings.Contains(tbl, kg.Primary) {
			t.Errorf("table: %s", tbl)
		}
		kb, err := os.ReadFile(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(kb), "\n") {
			if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") && strings.Contains(c.proc.Output(), f[1]) {
				t.Errorf("the coordinator log holds the bytes of key %s", f[0])
			}
		}
	})

	t.Run("host delete --wait", func(t *testing.T) {
		done := runAsync(t, c, "", "host", "delete", "r1-h02", "--wait", "--timeout", "2m")
		testenv.Eventually(t, time.Minute, "r1-h02 deletion requested or done", func() error {
			h, err := c.admin.GetHost(ctx, "r1-h02")
			switch {
			case client.IsNotFound(err) || (err == nil && h.DeletionRequested):
				return nil
			case err == nil:
				return errNotYet
			}
			return err
		})
		if h, err := c.admin.GetHost(ctx, "r1-h02"); err == nil && h.DeletionRequested {
			ag.report(t, "r1-h02", wire.HostStatus{ProvisioningState: wire.StateDeleting, OperationalStatus: wire.OpOK}, false,
				func(r *wire.StatusReport) { r.Remove = true })
		}
		if r := <-done; r.code != 0 || !strings.Contains(r.stdout, "host/r1-h02 delet") {
			t.Fatalf("delete --wait: %s", r)
		}
		if r := c.ctl(t, "", "host", "get", "r1-h02"); r.code != ExitNotFound {
			t.Errorf("after delete: %s", r)
		}
	})

	t.Run("cluster", func(t *testing.T) {
		var st wire.ClusterStatus
		if err := json.Unmarshal([]byte(c.mustCtl(t, "", "cluster", "status", "-o", "json").stdout), &st); err != nil || st.NodeID != "n1" || st.Tier != "test" {
			t.Fatalf("cluster status: %+v %v", st, err)
		}
		// Versions: each member's, and the cluster's effective one.
		if st.Upgrade == nil || st.Upgrade.EffectiveVersion == "" || len(st.Members) != 1 || st.Members[0].Version != st.Upgrade.EffectiveVersion {
			t.Fatalf("cluster status versions: %+v %+v", st.Upgrade, st.Members)
		}
		if r := c.mustCtl(t, "", "cluster", "status"); !strings.Contains(r.stdout, "Effective version") || !strings.Contains(r.stdout, "VERSION") ||
			!strings.Contains(r.stdout, st.Upgrade.EffectiveVersion) {
			t.Errorf("cluster status table: %s", r)
		}
		r := c.mustCtl(t, "", "cluster", "members")
		if !strings.Contains(r.stdout, "n1") || !strings.Contains(r.stdout, "yes") {
			t.Errorf("members: %s", r)
		}
		if r := c.ctl(t, "", "cluster", "remove", "n9"); r.code == 0 {
			t.Errorf("removing an unknown member succeeded: %s", r)
		}
	})
}

// runAsync runs a command in the background; its result arrives on the
// channel.
func runAsync(t *testing.T, c *coord, stdin string, args ...string) <-chan result {
	ch := make(chan result, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ch <- c.ctl(t, stdin, args...)
	}()
	t.Cleanup(wg.Wait)
	return ch
}

func waitIntent(t *testing.T, c *coord, host string, ok func(*wire.Intents) bool) {
	t.Helper()
	testenv.Eventually(t, time.Minute, "intent change on "+host, func() error {
		h, err := c.admin.GetHost(context.Background(), host)
		if err != nil {
			return err
		}
		if !ok(h.Intents) {
			return errNotYet
		}
		return nil
	})
}

type notYet struct{}

func (notYet) Error() string { return "not yet" }

var errNotYet = notYet{}

func itoa(n int) string { return strconv.Itoa(n) }

// reRackEpoch matches the EPOCH column of "rack list".
var reRackEpoch = regexp.MustCompile(`(?m)^(\S+\s+\d+\s+)(\d+)(\s)`)

func stripANSI(s string) string { return reANSI.ReplaceAllString(s, "") }

// TestBinaryExitCodes runs the built rackfencectl binary for the exit codes
// a script sees, without a coordinator where none is needed.
func TestBinaryExitCodes(t *testing.T) {
	bin := testenv.Binary(t, "rackfencectl")
	c := startCoordinator(t)
	dead := "http://127.0.0.1:" + itoa(testenv.FreePort(t, "127.0.0.1"))
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"--help"}, 0},
		{[]string{"host", "list", "--coordinator", c.url, "--token-file", c.tokenFile}, 0},
		{[]string{"host", "get", "nope", "--coordinator", c.url, "--token-file", c.tokenFile}, 3},
		{[]string{"host", "list", "--coordinator", c.url, "--token", "wrong", "--ca-file", filepath.Join(filepath.Dir(c.tokenFile), "tls", "ca.crt")}, 1},
		// A bare token pins no CA: without --ca-file the server is not
		// trusted, so nothing is sent.
		{[]string{"host", "list", "--coordinator", c.url, "--token", "wrong"}, 5},
		{[]string{"drain", "x", "--mode", "sideways", "--coordinator", dead}, 2},
		{[]string{"host", "list", "--coordinator", dead}, 5},
		{[]string{"completion", "bash"}, 0},
	}
	for _, tc := range cases {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out, _ := cmd.CombinedOutput()
		if got := cmd.ProcessState.ExitCode(); got != tc.code {
			t.Errorf("rackfencectl %v: exit %d, want %d\n%s", tc.args, got, tc.code, out)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found: completion syntax not checked")
	}
	script, _ := exec.Command(bin, "completion", "bash").Output()
	check := exec.Command(bash, "-n")
	check.Stdin = strings.NewReader(string(script))
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("bash -n on the completion script: %v\n%s", err, out)
	}
	// The script completes commands and flag values.
	probe := exec.Command(bash, "-c", string(script)+`
COMP_WORDS=(rackfencectl dr); COMP_CWORD=1; _rackfencectl; echo "${COMPREPLY[*]}"
COMP_WORDS=(rackfencectl drain h1 --mode ""); COMP_CWORD=4; _rackfencectl; echo "${COMPREPLY[*]}"
COMP_WORDS=(rackfencectl host ""); COMP_CWORD=2; _rackfencectl; echo "${COMPREPLY[*]}"
COMP_WORDS=(rackfencectl credentials ""); COMP_CWORD=2; _rackfencectl; echo "${COMPREPLY[*]}"`)
	out, err := probe.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "drain\nremoval maintenance\napply bmc-account delete export get list service") ||
		!strings.Contains(string(out), "\nget list rotate set") {
		t.Errorf("completion probe: %v\n%s", err, out)
	}
}
