package ctl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestApplyBMH applies metal3 documents to a real coordinator: the dry run
// changes nothing, the apply creates hosts, records and intents, a second
// run is unchanged, and refused input applies nothing.
func TestApplyBMH(t *testing.T) {
	c := startCoordinator(t)
	ctx := context.Background()
	list := "testdata/metal3/list.yaml"

	r := c.mustCtl(t, "", "host", "apply", "-f", list, "--rack-from", "label:rack", "--dry-run")
	for _, want := range []string{"(dry run) host/worker-0 would be created", "(dry run) credentials/worker-0-bmc-secret would be set",
		"host/worker-1 would wait power-off hold by remediation", "default-token-abcde ignored"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r)
		}
	}
	if l, err := c.admin.ListHosts(ctx, client.HostFilter{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("the dry run changed hosts: %v %v", l, err)
	}
	if l, err := c.admin.ListCredentials(ctx); err != nil || len(l.Items) != 0 {
		t.Fatalf("the dry run changed credentials: %v %v", l, err)
	}
	r = c.mustCtl(t, "", "host", "apply", "-f", list, "--rack-from", "label:rack", "--dry-run", "-o", "json")
	var p bmhPlan
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || !p.DryRun || len(p.Items) < 6 {
		t.Fatalf("dry run -o json: %v %+v\n%s", err, p, r)
	}

	c.mustCtl(t, "", "host", "apply", "-f", list, "--rack-from", "label:rack")
	w0, err := c.admin.GetHost(ctx, "worker-0")
	if err != nil {
		t.Fatal(err)
	}
	if !w0.ExternallyProvisioned || w0.BMC.Credentials != "worker-0-bmc-secret" || w0.UserData == nil || w0.Consumer == "" || w0.Labels["role"] != "worker" {
		t.Errorf("worker-0 stored as %+v", w0)
	}
	w1, err := c.admin.GetHost(ctx, "worker-1")
	if err != nil {
		t.Fatal(err)
	}
	if w1.Intents != nil && w1.Intents.PowerOff["remediation"] != nil {
		t.Errorf("worker-1 got a power-off hold before it was registered: %+v", w1.Intents)
	}
	cr, err := c.admin.GetCredentials(ctx, "worker-0-user-data")
	if err != nil || len(cr.DataKeys) != 1 || cr.DataKeys[0] != "userData" {
		t.Errorf("user data record: %+v %v", cr, err)
	}
	cr, err = c.admin.RevealCredentials(ctx, "worker-1-bmc-secret")
	if err == nil && (cr.Username != "admin" || cr.Password != "password") {
		t.Errorf("stringData secret stored as %+v", cr)
	}

	// Once the agent registered worker-1, a second run places the hold
	// and changes nothing else; a third run changes nothing at all.
	c.agent(t, "r1", "agent-r1").report(t, "worker-1", wire.HostStatus{ProvisioningState: wire.StateAvailable}, false)
	r = c.mustCtl(t, "", "host", "apply", "-f", list, "--rack-from", "label:rack")
	if !strings.Contains(r.stdout, "host/worker-1 intent power-off hold by remediation") || strings.Contains(r.stdout, "created") {
		t.Errorf("second run:\n%s", r)
	}
	if w1, err = c.admin.GetHost(ctx, "worker-1"); err != nil || w1.Intents == nil || w1.Intents.PowerOff["remediation"] == nil {
		t.Errorf("worker-1 has no power-off hold after the second run: %+v %v", w1, err)
	}
	r = c.mustCtl(t, "", "host", "apply", "-f", list, "--rack-from", "label:rack")
	if strings.Contains(r.stdout, "created") || strings.Contains(r.stdout, " changed") || strings.Contains(r.stdout, " intent ") ||
		!strings.Contains(r.stdout, "host/worker-0 unchanged") || !strings.Contains(r.stdout, "host/worker-1 unchanged") {
		t.Errorf("second run is not idempotent:\n%s", r)
	}

	r = c.mustCtl(t, "", "host", "apply", "-f", "testdata/metal3/documents.yaml", "--rack-from", "annotation:rack.example.com/rack")
	cp, err := c.admin.GetHost(ctx, "control-plane-0")
	if err != nil || cp.Intents == nil || cp.Intents.Detach == nil || cp.Rack != "r2" {
		t.Errorf("control-plane-0: %+v %v\n%s", cp, err, r)
	}
}

func TestApplyBMHRefused(t *testing.T) {
	c := startCoordinator(t)
	ctx := context.Background()
	good := oneBMH("", "")
	bad := strings.Replace(oneBMH("", "  architecture: x86_64\n"), "name: h1", "name: h2", 1)
	r := c.ctl(t, good+"---\n"+bad, "host", "apply", "-f", "-", "--rack", "r1")
	if r.code == 0 || !strings.Contains(r.stdout, "refused: standard input: document 2: BareMetalHost h2: spec.architecture") || !strings.Contains(r.stderr, "nothing was applied") {
		t.Errorf("refused input: %s", r)
	}
	if _, err := c.admin.GetHost(ctx, "h1"); !client.IsNotFound(err) {
		t.Errorf("h1 was applied although h2 was refused: %v", err)
	}

	missing := oneBMH("", "  userData: {name: h1-user-data}\n")
	r = c.ctl(t, missing, "host", "apply", "-f", "-", "--rack", "r1")
	if r.code == 0 || !strings.Contains(r.stdout, "h1-user-data, which is neither in the input nor a credentials record") {
		t.Errorf("missing Secret: %s", r)
	}
	r = c.mustCtl(t, missing, "host", "apply", "-f", "-", "--rack", "r1", "--allow-missing-secrets")
	if !strings.Contains(r.stdout, "credentials/h1-user-data waiting") || !strings.Contains(r.stdout, "host/h1 created") {
		t.Errorf("--allow-missing-secrets: %s", r)
	}
	r = c.ctl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "host", "apply", "-f", "-", "--rack", "r1")
	if r.code != 2 || !strings.Contains(r.stderr, `kind "ConfigMap"`) {
		t.Errorf("unknown kind: %s", r)
	}
	r = c.ctl(t, good, "host", "apply", "-f", "-")
	if r.code == 0 || !strings.Contains(r.stdout, "no rack: give --rack R") {
		t.Errorf("no rack: %s", r)
	}
	// One host refused for three reasons is one refused host.
	three := oneBMH("  annotations: {baremetalhost.metal3.io/paused: \"\"}\n", "  architecture: x86_64\n  customDeploy: {method: x}\n")
	r = c.ctl(t, three, "host", "apply", "-f", "-", "--rack", "r1")
	if r.code == 0 || strings.Count(r.stdout, "refused: ") != 3 || !strings.Contains(r.stderr, "1 BareMetalHost(s) refused") {
		t.Errorf("one host, three reasons: %s", r)
	}
}

// TestApplyBMHSameMachineStored: a host whose BMC address names the
// machine of a stored host (BMO's scheme variants alike) is refused; other
// systems of the same BMC, and an address moved from one host to another
// in one file, apply; so does a host without a spec (no BMC at all).
func TestApplyBMHSameMachineStored(t *testing.T) {
	c := startCoordinator(t)
	ctx := context.Background()
	c.mustCtl(t, oneBMH("", ""), "host", "apply", "-f", "-", "--rack", "r1")
	at := func(name, addr string) string {
		return strings.Replace(strings.Replace(oneBMH("", ""), "name: h1", "name: "+name, 1), "redfish://h/redfish/v1/Systems/1", addr, 1)
	}
	r := c.ctl(t, at("h2", "idrac-redfish+https://H:443/redfish/v1/Systems/1/"), "host", "apply", "-f", "-", "--rack", "r1")
	if r.code == 0 || !strings.Contains(r.stdout, `names the same machine as stored host h1 (bmc.address "redfish://h/redfish/v1/Systems/1")`) ||
		!strings.Contains(r.stderr, "1 BareMetalHost(s) refused") {
		t.Errorf("same machine as a stored host: %s", r)
	}
	if _, err := c.admin.GetHost(ctx, "h2"); !client.IsNotFound(err) {
		t.Errorf("h2 was applied: %v", err)
	}
	c.mustCtl(t, at("h2", "redfish://h/redfish/v1/Systems/2"), "host", "apply", "-f", "-", "--rack", "r1")
	// h1 moves to system 3 and h3 takes system 1, in one file.
	c.mustCtl(t, at("h1", "redfish://h/redfish/v1/Systems/3")+"---\n"+at("h3", "redfish://h/redfish/v1/Systems/1"), "host", "apply", "-f", "-", "--rack", "r1")
	if h, err := c.admin.GetHost(ctx, "h3"); err != nil || h.BMC.Address != "redfish://h/redfish/v1/Systems/1" {
		t.Errorf("h3: %+v %v", h, err)
	}
	// A host without a spec (and so without a BMC) is stored unmanaged
	// beside them.
	r = c.mustCtl(t, "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: discovered}\n", "host", "apply", "-f", "-", "--rack", "r1")
	if !strings.Contains(r.stdout, "host/discovered created") || !strings.Contains(r.stdout, "has no spec: registered unmanaged") {
		t.Errorf("host without spec: %s", r)
	}
	if h, err := c.admin.GetHost(ctx, "discovered"); err != nil || h.BMC.Address != "" || h.Online {
		t.Errorf("discovered: %+v %v", h, err)
	}
}

// TestApplyBMHMidway: when the coordinator refuses one change, the command
// stops and names what was applied and what was not.
func TestApplyBMHMidway(t *testing.T) {
	c := startCoordinator(t)
	ctx := context.Background()
	h0 := strings.Replace(oneBMH("  labels: {rack: r1}\n", ""), "name: h1", "name: h0", 1)
	c.mustCtl(t, h0, "host", "apply", "-f", "-", "--rack-from", "label:rack")
	// h2 is new (another system of the same BMC); h0 would move to rack
	// r2, which the coordinator refuses.
	h2 := strings.Replace(strings.Replace(oneBMH("  labels: {rack: r1}\n", ""), "name: h1", "name: h2", 1), "Systems/1", "Systems/2", 1)
	r := c.ctl(t, h2+"---\n"+strings.Replace(h0, "rack: r1", "rack: r2", 1), "host", "apply", "-f", "-", "--rack-from", "label:rack")
	if r.code == 0 || !strings.Contains(r.stderr, "stopped at host/h0") || !strings.Contains(r.stderr, "applied: host/h2") ||
		!strings.Contains(r.stderr, "not applied: host/h0") || !strings.Contains(r.stdout, "stopped midway") {
		t.Errorf("midway failure: %s", r)
	}
	if _, err := c.admin.GetHost(ctx, "h2"); err != nil {
		t.Errorf("h2 was reported applied: %v", err)
	}
	if h, err := c.admin.GetHost(ctx, "h0"); err != nil || h.Rack != "r1" {
		t.Errorf("h0: %+v %v", h, err)
	}
}

// bmhDoc builds a one-host document with extra spec and metadata YAML.
func oneBMH(meta, spec string) string {
	return "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: h1\n" + meta +
		"spec:\n  online: true\n  bmc: {address: \"redfish://h/redfish/v1/Systems/1\"}\n" + spec
}
