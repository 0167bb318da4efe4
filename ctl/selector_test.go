package ctl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestLabelSelectors runs host list -l and the bulk commands with -l
// against a real coordinator.
func TestLabelSelectors(t *testing.T) {
	c := startCoordinator(t)
	c.mustCtl(t, "", "host", "apply", "-f", "testdata/labels.yaml")

	intents := func() map[string]string {
		t.Helper()
		l, err := c.admin.ListHosts(context.Background(), client.HostFilter{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for i := range l.Items {
			in, _ := hostIntents(&l.Items[i])
			out[l.Items[i].Name] = in
		}
		return out
	}
	wantIntents := func(want map[string]string) {
		t.Helper()
		got := intents()
		for n, w := range want {
			if got[n] != w {
				t.Errorf("host %s intents %q, want %q (all: %v)", n, got[n], w, got)
			}
		}
	}

	t.Run("list and get", func(t *testing.T) {
		golden(t, "host-list-labels.txt", c.mustCtl(t, "", "host", "list", "-l", "role=compute", "--show-labels").stdout)
		golden(t, "host-get-labels.txt", c.mustCtl(t, "", "host", "get", "r1-b").stdout)
		var l wire.List[wire.Host]
		out := c.mustCtl(t, "", "host", "list", "-l", "zone in (a),role!=compute", "-o", "json").stdout
		if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Items) != 1 || l.Items[0].Name != "r2-c" {
			t.Fatalf("list -l 'zone in (a),role!=compute': %s %v", out, err)
		}
		if r := c.mustCtl(t, "", "host", "list", "-l", "!role"); !strings.Contains(r.stdout, "r2-d") || strings.Contains(r.stdout, "r1-a") {
			t.Fatalf("list -l '!role': %s", r)
		}
		// A GET's YAML (labels included) applies back unchanged.
		y := c.mustCtl(t, "", "host", "get", "r1-b", "-o", "yaml").stdout
		if r := c.mustCtl(t, y, "host", "apply", "-f", "-"); r.stdout != "host/r1-b configured\n" {
			t.Fatalf("apply back: %s", r)
		}
	})

	t.Run("usage errors before any request", func(t *testing.T) {
		dead := map[string]string{"RACKFENCE_COORDINATOR": "http://127.0.0.1:" + itoa(testenv.FreePort(t, "127.0.0.1")), "RACKFENCE_TOKEN": "x"}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"host", "list", "-l", "role compute"}, `-l "role compute" at character 6: expected an operator after key "role"`},
			{[]string{"detach", "-l", "-role=x"}, `key "-role" is not a valid label key`},
			{[]string{"detach", "r1-a", "-l", "role=compute"}, "not both"},
			{[]string{"pivot", "-l", "zone in (a", "--to", "b"}, "expected ',' or ')'"},
		} {
			r := runCtl(t, dead, "", nil, tc.args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%v: want exit 2 saying %q, got %s", tc.args, tc.want, r)
			}
		}
		if r := c.ctl(t, "", "host", "apply", "-f", "-"); r.code != ExitUsage {
			t.Errorf("apply of nothing: %s", r)
		}
		bad := "name: r1-x\nrack: r1\nlabels: {\"Bad Key\": x}\n"
		if r := c.ctl(t, bad, "host", "apply", "-f", "-"); r.code != ExitUsage || !strings.Contains(r.stderr, `field labels key "Bad Key"`) {
			t.Errorf("apply with a bad label: %s", r)
		}
	})

	t.Run("several matches need --yes off a terminal", func(t *testing.T) {
		r := c.ctl(t, "", "detach", "-l", "role=compute")
		if r.code != ExitUsage || !strings.Contains(r.stderr, "add --yes") || !strings.Contains(r.stderr, "nothing was sent") {
			t.Fatalf("detach -l with 2 matches, no --yes: %s", r)
		}
		if !strings.Contains(r.stdout, "2 host(s) match -l role=compute") || !strings.Contains(r.stdout, "r1-a") || !strings.Contains(r.stdout, "r1-b") {
			t.Fatalf("the set is not printed first: %s", r)
		}
		wantIntents(map[string]string{"r1-a": "", "r1-b": ""})
	})

	t.Run("one match acts without --yes", func(t *testing.T) {
		r := c.mustCtl(t, "", "detach", "-l", "role=storage,zone=a", "--reason", "test")
		if !strings.Contains(r.stdout, "r2-c: detach requested") {
			t.Fatalf("%s", r)
		}
		wantIntents(map[string]string{"r2-c": "detach*", "r1-a": "", "r1-b": "", "r2-d": ""})
	})

	t.Run("--yes acts on every match", func(t *testing.T) {
		r := c.mustCtl(t, "", "drain", "-l", "role=compute", "--mode", "maintenance", "--yes")
		golden(t, "drain-selector.txt", r.stdout)
		wantIntents(map[string]string{"r1-a": "drain-maintenance*", "r1-b": "drain-maintenance*", "r2-c": "detach*", "r2-d": ""})
		// --rack narrows -l.
		c.mustCtl(t, "", "detach", "-l", "zone", "--rack", "r1", "--yes")
		wantIntents(map[string]string{"r1-a": "detach*,drain-maintenance*", "r1-b": "detach*,drain-maintenance*", "r2-c": "detach*"})
	})

	t.Run("terminal asks", func(t *testing.T) {
		term := func(io *IO) { io.IsTerminal = func(f any) bool { return f == io.Stdin } }
		env := map[string]string{"RACKFENCE_COORDINATOR": c.url, "RACKFENCE_TOKEN_FILE": c.tokenFile}
		r := runCtl(t, env, "n\n", term, "attach", "-l", "role=compute")
		if r.code != ExitFailed || !strings.Contains(r.stderr, "[y/N]") || !strings.Contains(r.stderr, "not confirmed") {
			t.Fatalf("answer n: %s", r)
		}
		wantIntents(map[string]string{"r1-a": "detach*,drain-maintenance*"})
		r = runCtl(t, env, "y\n", term, "attach", "-l", "role=compute")
		if r.code != ExitOK {
			t.Fatalf("answer y: %s", r)
		}
		wantIntents(map[string]string{"r1-a": "drain-maintenance*", "r1-b": "drain-maintenance*", "r2-c": "detach*"})
	})

	t.Run("restore, resume, no match", func(t *testing.T) {
		c.mustCtl(t, "", "restore", "-l", "role=compute", "--yes", "-o", "json")
		wantIntents(map[string]string{"r1-a": "", "r1-b": ""})
		r := c.mustCtl(t, "", "resume", "-l", "example.com/gpu")
		if !strings.Contains(r.stdout, "r1-b: resume requested") || strings.Contains(r.stdout, "r1-a:") {
			t.Fatalf("resume -l example.com/gpu: %s", r)
		}
		r = c.ctl(t, "", "drain", "-l", "role=none", "--mode", "removal")
		if r.code != ExitNotFound || !strings.Contains(r.stderr, "no host matches -l role=none") || !strings.Contains(r.stderr, "--show-labels") {
			t.Fatalf("no match: %s", r)
		}
		r = c.ctl(t, "", "pivot", "-l", "zone=a", "--to", "elsewhere")
		if r.code != ExitUsage || !strings.Contains(r.stderr, "add --yes to pivot") {
			t.Fatalf("pivot -l with 2 matches: %s", r)
		}
	})

	t.Run("--wait follows every match", func(t *testing.T) {
		ag := c.agent(t, "r1", "agent-r1-labels")
		done := runAsync(t, c, "", "detach", "-l", "role=compute", "--yes", "--wait")
		for _, n := range []string{"r1-a", "r1-b"} {
			waitIntent(t, c, n, func(in *wire.Intents) bool { return in != nil && in.Detach != nil })
		}
		for _, n := range []string{"r1-a", "r1-b"} {
			ag.report(t, n, wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpDetached}, true)
		}
		r := <-done
		if r.code != ExitOK || !strings.Contains(r.stdout, "r1-a: detached") || !strings.Contains(r.stdout, "r1-b: detached") {
			t.Fatalf("detach -l --wait: %s", r)
		}
	})
}
