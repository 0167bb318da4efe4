package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
)

const testSHA256 = "9f6c6e1f3b7c3e0d4d4b4c1a1a5e8e2f0c7b6a5d4e3f2a1b0c9d8e7f6a5b4c3d"

// TestImportIronic imports a real Ironic (deploy/peers/ironic.sh) whose
// nodes are active (adopted), available, enroll (one in maintenance, one
// with a name rackfence cannot take), adopt failed, and one without
// credentials: the dry run and a refused run apply nothing, the import
// creates the hosts and records, a re-run is unchanged, and Ironic sees
// GET requests only and holds exactly what it held before.
func TestImportIronic(t *testing.T) {
	ir := rig.StartIronic(t)
	sim := rig.StartSim(t, t.TempDir(), 3, 0)
	a := ironicAPI{t, ir.URL}
	redfish := func(i int) map[string]any {
		return map[string]any{"redfish_address": fmt.Sprintf("http://127.0.0.1:%d", sim.Base+i), "redfish_system_id": "/redfish/v1/Systems/1",
			"redfish_username": "admin", "redfish_password": "password"}
	}
	// web-1: adopted with fake-hardware (Ironic validates deploy and boot
	// for adopt), then switched to redfish against the simulator.
	web := a.do(http.MethodPost, "/v1/nodes", map[string]any{"name": "web-1", "driver": "fake-hardware", "driver_info": redfish(0),
		"properties": map[string]any{"root_device": map[string]any{"name": "/dev/sda", "size": ">= 100"}, "capabilities": "boot_mode:uefi"},
		"extra":      map[string]any{"rack": "r1", "role": "web", "ticket": map[string]any{"id": 7}},
		"instance_info": map[string]any{"image_source": "http://images.example/os.qcow2", "image_os_hash_algo": "sha256",
			"image_os_hash_value": testSHA256, "image_disk_format": "qcow2"}})
	a.do(http.MethodPost, "/v1/ports", map[string]any{"node_uuid": web["uuid"], "address": "52:54:00:AA:00:01"})
	a.provision("web-1", "manage", "manageable")
	a.provision("web-1", "adopt", "active")
	a.do(http.MethodPut, "/v1/nodes/web-1/maintenance", map[string]any{"reason": "switch driver"})
	a.do(http.MethodPatch, "/v1/nodes/web-1?reset_interfaces=true", []map[string]any{{"op": "replace", "path": "/driver", "value": "redfish"}})
	a.do(http.MethodDelete, "/v1/nodes/web-1/maintenance", nil)
	// db-1: redfish, verified against the simulator, available.
	db := a.do(http.MethodPost, "/v1/nodes", map[string]any{"name": "db-1", "driver": "redfish", "driver_info": redfish(1), "extra": map[string]any{"rack": "r2"}})
	a.do(http.MethodPost, "/v1/ports", map[string]any{"node_uuid": db["uuid"], "address": "52:54:00:aa:00:02"})
	a.provision("db-1", "manage", "manageable")
	a.provision("db-1", "provide", "available")
	// spare-1: ipmi, enroll; Rack1_Spare: ipmi, enroll, in maintenance.
	spare := a.do(http.MethodPost, "/v1/nodes", map[string]any{"name": "spare-1", "driver": "ipmi", "extra": map[string]any{"rack": "r1"},
		"driver_info": map[string]any{"ipmi_address": "10.9.9.9", "ipmi_port": 6230, "ipmi_username": "root"}})
	odd := a.do(http.MethodPost, "/v1/nodes", map[string]any{"name": "Rack1_Spare", "driver": "ipmi", "driver_info": map[string]any{"ipmi_address": "10.9.9.10"}})
	a.do(http.MethodPut, "/v1/nodes/Rack1_Spare/maintenance", map[string]any{"reason": "fan replaced"})
	// broken-1: adopt failed (boot pxe + deploy ramdisk, no port).
	a.do(http.MethodPost, "/v1/nodes", map[string]any{"name": "broken-1", "driver": "fake-hardware", "boot_interface": "pxe", "deploy_interface": "ramdisk"})
	a.provision("broken-1", "manage", "manageable")
	a.do(http.MethodPut, "/v1/nodes/broken-1/states/provision", map[string]any{"target": "adopt"})
	a.waitState("broken-1", "adopt failed")
	// nocreds-1: redfish, enroll, not in the credentials file.
	a.do(http.MethodPost, "/v1/nodes", map[string]any{"name": "nocreds-1", "driver": "redfish", "driver_info": redfish(2)})

	creds := filepath.Join(t.TempDir(), "bmc.yaml")
	if err := os.WriteFile(creds, []byte(fmt.Sprintf("web-1: {username: admin, password: password}\n\"http://127.0.0.1:%d\": {username: admin, password: password}\n%s: {password: ipmi-pw}\nRack1_Spare: {username: root, password: odd-pw}\n",
		sim.Base+1, spare["uuid"])), 0o600); err != nil {
		t.Fatal(err)
	}
	before := a.settled()
	rec := newRecorder(t, ir.URL)
	c := startCoordinator(t)
	ctx := context.Background()
	args := []string{"import", "ironic", "--ironic-url", rec.URL, "--rack-from", "extra.rack", "--rack", "r3", "--credentials-file", creds}

	// The dry run (-o json) and a run refused for nocreds-1 apply nothing.
	r := c.ctl(t, "", append(args, "--dry-run", "-o", "json")...)
	var p bmhPlan
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || !p.DryRun {
		t.Fatalf("dry run -o json: %v\n%s", err, r)
	}
	if len(p.Refused) != 1 || !strings.Contains(p.Refused[0], "node nocreds-1") || !strings.Contains(p.Refused[0], "--allow-missing-credentials") {
		t.Errorf("refused: %q", p.Refused)
	}
	if len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0], `node broken-1`) || !strings.Contains(p.Skipped[0], `"adopt failed"`) {
		t.Errorf("skipped: %q", p.Skipped)
	}
	r = c.ctl(t, "", args...)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "1 Ironic node(s) refused; nothing was applied") {
		t.Errorf("refused run: %s", r)
	}
	if l, err := c.admin.ListHosts(ctx, client.HostFilter{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("the dry run or the refused run changed hosts: %+v %v", l, err)
	}
	if l, err := c.admin.ListCredentials(ctx); err != nil || len(l.Items) != 0 {
		t.Fatalf("the dry run or the refused run changed credentials: %+v %v", l, err)
	}

	args = append(args, "--allow-missing-credentials")
	r = c.mustCtl(t, "", args...)
	for _, want := range []string{"host/web-1 created", "host/db-1 created", "host/spare-1 created", "host/" + odd["uuid"].(string) + " created",
		"host/nocreds-1 created", "credentials/nocreds-1-bmc waiting", "skipped: node broken-1", "fan replaced", "read 6 nodes and 2 ports from Ironic in 2 GET requests"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("import lacks %q:\n%s", want, r)
		}
	}
	w, err := c.admin.GetHost(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	if !w.ExternallyProvisioned || w.Rack != "r1" || w.BMC.Address != sim.Address(0) || w.BMC.Credentials != "web-1-bmc" ||
		w.BootMACAddress != "52:54:00:aa:00:01" || w.BootMode != wire.BootModeUEFI || w.RootDeviceHints == nil ||
		w.RootDeviceHints.DeviceName != "/dev/sda" || w.RootDeviceHints.MinSizeGigabytes != 100 || w.Image == nil ||
		w.Image.Checksum != testSHA256 || w.Image.Format != "qcow2" || w.Labels["role"] != "web" || w.Labels["ticket"] != "" {
		t.Errorf("web-1 stored as %+v", w)
	}
	d, err := c.admin.GetHost(ctx, "db-1")
	if err != nil || d.ExternallyProvisioned || d.Rack != "r2" || d.BMC.Address != sim.Address(1) {
		t.Errorf("db-1 stored as %+v %v", d, err)
	}
	s, err := c.admin.GetHost(ctx, "spare-1")
	if err != nil || s.BMC.Address != "ipmi://10.9.9.9:6230" || s.Rack != "r1" || s.Online {
		t.Errorf("spare-1 stored as %+v %v", s, err)
	}
	if o, err := c.admin.GetHost(ctx, odd["uuid"].(string)); err != nil || o.Rack != "r3" || o.BMC.Address != "ipmi://10.9.9.10" {
		t.Errorf("Rack1_Spare stored as %+v %v", o, err)
	}
	cr, err := c.admin.RevealCredentials(ctx, "spare-1-bmc")
	if err != nil || cr.Username != "root" || cr.Password != "ipmi-pw" {
		t.Errorf("spare-1-bmc: %+v %v (username from driver_info, password from the file)", cr, err)
	}
	cr, err = c.admin.RevealCredentials(ctx, "db-1-bmc")
	if err != nil || cr.Username != "admin" || cr.Password != "password" {
		t.Errorf("db-1-bmc (keyed by BMC address): %+v %v", cr, err)
	}

	r = c.mustCtl(t, "", args...)
	if strings.Contains(r.stdout, "created") || strings.Contains(r.stdout, " changed") || !strings.Contains(r.stdout, "host/web-1 unchanged") {
		t.Errorf("the re-run is not idempotent:\n%s", r)
	}

	// With --ironic-token-file the token goes as X-Auth-Token (noauth
	// Ironic ignores it; the proxy sees it).
	tok := filepath.Join(t.TempDir(), "ironic.token")
	if err := os.WriteFile(tok, []byte("gAAAA-test-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.mustCtl(t, "", append(args, "--ironic-token-file", tok, "--dry-run")...)

	// Pages of 2: 6 nodes in 3 full pages and an empty one, 2 ports in a
	// full page and an empty one.
	r = c.mustCtl(t, "", append(args, "--page-size", "2", "--dry-run")...)
	if !strings.Contains(r.stdout, "read 6 nodes and 2 ports from Ironic in 6 GET requests") {
		t.Errorf("--page-size 2:\n%s", r)
	}

	reqs, tokens := rec.take()
	for _, q := range reqs {
		if !strings.HasPrefix(q, "GET ") {
			t.Errorf("the import sent %s to Ironic", q)
		}
	}
	if len(reqs) != 5*2+6 {
		t.Errorf("6 imports made %d requests to Ironic, want 16 (one page of nodes, one of ports each, then 6 for pages of 2): %q", len(reqs), reqs)
	}
	if n := len(tokens); n < 8 || tokens[0] != "" || tokens[n-7] != "gAAAA-test-token" || tokens[n-8] != "gAAAA-test-token" || tokens[n-1] != "" {
		t.Errorf("X-Auth-Token of the requests: %q, want the token file's for the token import only", tokens)
	}
	if after := a.snapshot(); after != before {
		t.Errorf("Ironic changed during the imports:\n--- before\n%s\n--- after\n%s", before, after)
	}

	// An https:// Ironic whose CA the system does not trust: refused, with
	// the flag to give; read with --ironic-ca-file.
	trec, ca := newTLSRecorder(t, ir.URL)
	targs := []string{"import", "ironic", "--ironic-url", trec.URL, "--rack-from", "extra.rack", "--rack", "r3", "--credentials-file", creds, "--dry-run"}
	r = c.ctl(t, "", targs...)
	if r.code != ExitFailed || !strings.Contains(r.stderr, "give that CA with --ironic-ca-file") {
		t.Errorf("an https:// Ironic signed by an unknown CA:\n%s", r)
	}
	r = c.mustCtl(t, "", append(targs, "--ironic-ca-file", ca, "--allow-missing-credentials")...)
	if !strings.Contains(r.stdout, "read 6 nodes and 2 ports from Ironic in 2 GET requests") {
		t.Errorf("--ironic-ca-file:\n%s", r)
	}
	if reqs, _ := trec.take(); len(reqs) != 2 {
		t.Errorf("the https import made %d requests through the TLS proxy, want 2: %q", len(reqs), reqs)
	}
}

// TestImportIronicBadInput: flags are checked (exit 2, naming the flag)
// before anything is read; an Ironic that does not answer is exit 1 with
// what to check.
func TestImportIronicBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bmc.yaml")
	if err := os.WriteFile(bad, []byte("n1: {user: a, password: b}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--rack", "r1"}, ExitUsage, "--ironic-url is required"},
		{[]string{"--ironic-url", "ironic:6385", "--rack", "r1"}, ExitUsage, `--ironic-url "ironic:6385": give an http:// or https:// URL`},
		{[]string{"--ironic-url", "http://127.0.0.1:1"}, ExitUsage, "give --rack R or --rack-from"},
		{[]string{"--ironic-url", "http://127.0.0.1:1", "--rack-from", "labels.rack"}, ExitUsage, `--rack-from "labels.rack": use properties.KEY or extra.KEY`},
		{[]string{"--ironic-url", "http://127.0.0.1:1", "--rack", "R1"}, ExitUsage, `--rack: "R1" is not a valid name`},
		{[]string{"--ironic-url", "http://127.0.0.1:1", "--rack", "r1", "--page-size", "-1"}, ExitUsage, "--page-size -1"},
		{[]string{"--ironic-url", "http://127.0.0.1:1", "--rack", "r1", "--credentials-file", bad}, ExitUsage, `entry "n1": field "user" is not username or password`},
		{[]string{"--ironic-url", "http://127.0.0.1:1", "--rack", "r1", "--ironic-ca-file", bad}, ExitUsage, `--ironic-ca-file is for an https:// --ironic-url`},
		{[]string{"--ironic-url", "https://127.0.0.1:1", "--rack", "r1", "--ironic-ca-file", bad}, ExitUsage, "--ironic-ca-file " + bad + " holds no PEM certificate"},
		{[]string{"--ironic-url", "http://127.0.0.1:1", "--rack", "r1"}, ExitFailed, "check --ironic-url"},
	} {
		r := runCtl(t, nil, "", nil, append([]string{"import", "ironic"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: %s\nwant exit %d and %q", c.args, r, c.code, c.want)
		}
	}
}
