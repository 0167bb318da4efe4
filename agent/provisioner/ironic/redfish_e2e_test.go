package ironic_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// The five operations of the Ironic redfish path, in order.
var vmediaOps = []string{"manage", "inspect", "provide", "deploy", "undeploy"}

// vmediaCase is one simulator profile and what Ironic 21.4 + sushy 4.3.3
// do with it: fail maps an operation that is expected to fail to a
// fragment of Ironic's last_error (or of the provisioner's error); the
// operations after it are not run. system is the system to drive (the
// blade profile serves four).
type vmediaCase struct {
	profile string
	system  int
	fail    map[string]string
	// media is the virtual media device Ironic must use (path suffix).
	media string
	// basic: the service has no session service (sushy uses HTTP Basic).
	basic bool
	// tls: the BMC serves HTTPS with a self-signed certificate (the host
	// sets disableCertificateVerification: redfish_verify_ca false).
	tls bool
	// ironicDiffers: node properties where Ironic's inspection is known to
	// differ from the profile's hardware (what the direct path finds).
	ironicDiffers map[string]string
}

func (c vmediaCase) name() string {
	name := c.profile
	if c.system != 0 {
		name = fmt.Sprintf("%s-system%d", name, c.system)
	}
	if c.tls {
		name += "-https"
	}
	return name
}

// The Ironic path with Ironic's own redfish hardware type end to end
// against rackfence-bmcsim, per simulator profile: manage (Ironic
// verifies the BMC through sushy), inspect (redfish inspect interface),
// provide, deploy (ramdisk deploy, redfish-virtual-media boot: the ISO
// URL is inserted into the BMC's virtual CD, boot device CD, power on)
// and undeploy (eject, power off, available again). Assertions read the
// simulator's state and audit and Ironic's node, not our logs.
//
//	go test -race -count=1 -v -run 'TestRedfishHardwareTypeEndToEnd' ./agent/provisioner/ironic/
func TestRedfishHardwareTypeEndToEnd(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	cases := []vmediaCase{
		{profile: "default", media: "/Managers/1/VirtualMedia/CD1"},
		{profile: "default", tls: true, media: "/Managers/1/VirtualMedia/CD1"},
		// No session service: sushy falls back to HTTP Basic.
		{profile: "basic-only", media: "/Managers/1/VirtualMedia/Cd", basic: true},
		// Virtual media only under the system, changed by PATCH: sushy
		// 4.3.3 looks under the managers only.
		{profile: "system-vmedia-patch", fail: map[string]string{
			"deploy": "The attribute VirtualMedia is missing from the resource /redfish/v1/Managers/BMC"}},
		{profile: "ilo", media: "/Managers/1/VirtualMedia/2"},
		// Virtual media under System.Embedded.1 only (iDRAC 10 shape).
		{profile: "idrac", fail: map[string]string{
			"deploy": "The attribute VirtualMedia is missing from the resource /redfish/v1/Managers/iDRAC.Embedded.1"}},
		// InsertMedia needs TransferProtocolType: sushy retries with it.
		{profile: "openbmc", media: "/Managers/bmc/VirtualMedia/Slot_0"},
		{profile: "blade", media: "/Managers/Blade1BMC/VirtualMedia/CD"},
		{profile: "blade", system: 2, media: "/Managers/Blade3BMC/VirtualMedia/CD"},
		{profile: "no-vmedia", fail: map[string]string{"deploy": "No suitable virtual media device found"}},
		// Drives linked into the chassis without Id, a VLAN-configured
		// physical port, the host interface to the BMC, a CXL region.
		// Memory: both report MemorySummary. Disks: sushy 4.3.3 requires
		// a Drive's Id, so Ironic finds none of the tower's drives
		// (local_gb 0) where the direct path finds four.
		{profile: "tower", media: "/Managers/1/VirtualMedia/CD1", ironicDiffers: map[string]string{"local_gb": "0"}},
	}
	have := map[string]bool{}
	for _, p := range bmcsim.Profiles() {
		have[p] = true
	}
	table := map[string]map[string]string{}
	for _, c := range cases {
		name := c.name()
		t.Run(name, func(t *testing.T) {
			if !have[c.profile] {
				t.Fatalf("bmcsim has no profile %q (it has %v)", c.profile, bmcsim.Profiles())
			}
			table[name] = runVMediaCase(t, url, c)
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| profile | %s |\n|---|---|---|---|---|---|\n", strings.Join(vmediaOps, " | "))
	for _, c := range cases {
		name := c.name()
		row := table[name]
		cells := make([]string, len(vmediaOps))
		for i, op := range vmediaOps {
			cells[i] = row[op]
			if cells[i] == "" {
				cells[i] = "not run"
			}
		}
		fmt.Fprintf(&b, "| %s | %s |\n", name, strings.Join(cells, " | "))
	}
	t.Log(b.String())
}

func runVMediaCase(t *testing.T, url string, c vmediaCase) map[string]string {
	row := map[string]string{}
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	// A MAC prefix of its own per case: the nodes of earlier cases (and
	// runs) keep their ports in the shared Ironic until deleted.
	seq := hostSeq.Add(1)
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, AuditPath: audit, PowerOn: true, Profile: c.profile, TLS: c.tls,
		MACPrefix: fmt.Sprintf("52:55:%02x:%02x", os.Getpid()&0xff, seq&0xff)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	p := newProv(t, url, func(c *ironic.Config) {
		c.WaitTimeout = 3 * time.Minute
		c.Inventory = func(context.Context, provisioner.Host) (*wire.HardwareDetails, error) {
			return nil, fmt.Errorf("the BMC inventory must not be read: Ironic inspects")
		}
	})
	ctx := ctxT(t)
	j := c.system
	h := provisioner.Host{Name: uniqName("vm-" + c.profile), BMC: wire.BMC{Address: sim.SystemAddresses(0)[j], DisableCertificateVerification: c.tls},
		Username: "admin", Password: "password", BootMACAddress: sim.SystemMAC(0, j)}
	iso := "http://127.0.0.1:9/images/" + h.Name + ".iso"
	h.Image = &wire.Image{URL: iso}

	// step runs one operation: an expected failure must happen with its
	// reason; an unexpected one fails the test. It reports whether the
	// next operations can run.
	step := func(op string, call func() (provisioner.Result, error)) (provisioner.Result, bool) {
		t.Helper()
		start := time.Now()
		auditBefore := len(auditLines(t, audit))
		r, err := call()
		took := time.Since(start).Seconds()
		logWire(t, op, auditLines(t, audit)[auditBefore:])
		if err == nil && r.InProgress {
			err = fmt.Errorf("still in progress after the wait timeout")
		}
		var n *nodes.Node
		if id := h.ProvisioningID; id != "" {
			n, _ = rawNode(t, url, id)
		} else if id := r.ProvisioningID; id != "" {
			n, _ = rawNode(t, url, id)
		}
		want, expectFail := c.fail[op]
		switch {
		case err == nil && !expectFail:
			row[op] = fmt.Sprintf("pass (%.1f s)", took)
			t.Logf("%s: pass in %.1f s", op, took)
			return r, true
		case err == nil:
			t.Errorf("%s passed (%.1f s); expected Ironic to fail with %q", op, took, want)
			row[op] = "UNEXPECTED pass"
			return r, false
		case !expectFail:
			t.Errorf("%s failed after %.1f s: %v", op, took, err)
			row[op] = "UNEXPECTED failure: " + err.Error()
			return r, false
		}
		reason := err.Error()
		if n != nil && n.LastError != "" {
			reason = n.LastError
		}
		if !strings.Contains(reason, want) && !strings.Contains(err.Error(), want) {
			t.Errorf("%s failed as expected but with %q (error %v), want %q", op, reason, err, want)
		}
		state := ""
		if n != nil {
			state = n.ProvisionState + ": "
		}
		row[op] = fmt.Sprintf("expected failure (%.1f s), %s%s", took, state, reason)
		t.Logf("%s: expected failure in %.1f s: %s%s", op, took, state, reason)
		return r, false
	}

	// manage: create (redfish hardware type), enroll → verifying →
	// manageable: Ironic reads the system through sushy.
	r, ok := step("manage", func() (provisioner.Result, error) { return p.Register(ctx, h) })
	if r.ProvisioningID != "" {
		h.ProvisioningID = r.ProvisioningID
		t.Cleanup(func() { forceDelete(t, url, h.ProvisioningID) })
	}
	if !ok {
		return row
	}
	n := wantState(t, url, h.ProvisioningID, "manageable")
	// How sushy authenticated (logins are not audited: the simulator
	// counts them): a session where the service has a session service,
	// HTTP Basic where it has none.
	if logins := sim.State(0).Logins; (logins == 0) != c.basic {
		t.Errorf("session logins after manage: %d; want none exactly when the profile has no session service (basic=%v)", logins, c.basic)
	}
	if n.PowerState != "power on" {
		t.Errorf("node power_state %q after manage, want the simulator's \"power on\" read through sushy", n.PowerState)
	}
	if n.Driver != "redfish" || n.InspectInterface != "redfish" || n.ManagementInterface != "redfish" || n.PowerInterface != "redfish" {
		t.Fatalf("node driver %q, inspect %q, management %q, power %q; want redfish for all",
			n.Driver, n.InspectInterface, n.ManagementInterface, n.PowerInterface)
	}

	// inspect: manageable → inspecting → manageable through the redfish
	// inspect interface; details from the node's properties and ports.
	before := len(auditLines(t, audit))
	r, ok = step("inspect", func() (provisioner.Result, error) { return p.Inspect(ctx, h) })
	if !ok {
		return row
	}
	n = wantState(t, url, h.ProvisioningID, "manageable")
	t.Logf("inspect: node properties %v", n.Properties)
	props := ironicProps(sim.ExpectedHardware(0, j))
	maps.Copy(props, c.ironicDiffers)
	checkInspected(t, props, n.Properties, r.HardwareDetails, h.BootMACAddress)
	checkParity(t, c.profile, directDetails(t, h), n.Properties, r.HardwareDetails.NICs)
	if muts := mutating(auditLines(t, audit)[before:]); len(muts) != 0 {
		t.Errorf("inspection changed the BMC: %+v", muts)
	}
	// Ironic's redfish inspect interface records properties, no inventory.
	if code := inventoryStatus(t, url, h.ProvisioningID); code != http.StatusNotFound {
		t.Errorf("GET inventory after redfish inspection: %d, want 404 (no inventory recorded)", code)
	}

	// provide: manageable → available (automated cleaning is off).
	if _, ok = step("provide", func() (provisioner.Result, error) { return p.Provide(ctx, h) }); !ok {
		return row
	}
	wantState(t, url, h.ProvisioningID, "available")

	// deploy: ramdisk deploy over redfish virtual media.
	before = len(auditLines(t, audit))
	if _, ok = step("deploy", func() (provisioner.Result, error) { return p.Provision(ctx, h) }); ok {
		checkDeployed(t, c, url, h, iso, sim, audit, before)
	} else if _, expected := c.fail["deploy"]; !expected {
		return row
	}

	// undeploy (also after an expected deploy failure: from deploy failed,
	// see Deprovision): active → deleting → cleaning → available: eject,
	// power off.
	before = len(auditLines(t, audit))
	if _, ok = step("undeploy", func() (provisioner.Result, error) { return p.Deprovision(ctx, h) }); !ok {
		return row
	}
	n = wantState(t, url, h.ProvisioningID, "available")
	if n.LastError != "" {
		t.Errorf("available node after undeploy has last_error %q", n.LastError)
	}
	for _, m := range sim.State(0).VirtualMedia {
		if m.Inserted || m.Image != "" {
			t.Errorf("virtual media %s after undeploy: %+v; want ejected", m.Path, m)
		}
	}
	_, deployFailed := c.fail["deploy"]
	if deployFailed && (n.BootInterface != "pxe" || n.DeployInterface != "direct" || n.Maintenance) {
		// Deprovision reset the interfaces to Ironic's defaults: the
		// virtual media ones cannot tear down what they could not set up.
		t.Errorf("node after undeploy of a failed virtual media deploy: boot %q deploy %q maintenance %v; want Ironic's defaults pxe, direct, no maintenance",
			n.BootInterface, n.DeployInterface, n.Maintenance)
	}
	if s := sim.State(0).Systems[j]; s.Power != "Off" {
		t.Errorf("system %s after undeploy: power %s; want Off", s.Path, s.Power)
	} else if !deployFailed && (s.BootOverride.Target != "Cd" || s.BootOverride.Enabled != "Continuous") {
		// Ironic's undeploy leaves the persistent boot override (Cd,
		// Continuous) in place; the next deploy sets the device again.
		t.Logf("boot override after undeploy: %+v (Ironic 21.4 left Cd/Continuous when this was written)", s.BootOverride)
	}
	if !deployFailed {
		// Ironic ejects first (boot clean_up_instance), then powers off.
		wantCalls(t, auditLines(t, audit)[before:], "undeploy", "VirtualMedia.EjectMedia|PATCH VirtualMedia", "ForceOff")
	}
	return row
}

// checkDeployed checks an active node and what the simulator saw.
func checkDeployed(t *testing.T, c vmediaCase, url string, h provisioner.Host, iso string, sim *bmcsim.Sim, audit string, before int) {
	t.Helper()
	n := wantState(t, url, h.ProvisioningID, "active")
	if n.BootInterface != "redfish-virtual-media" || n.DeployInterface != "ramdisk" || n.LastError != "" {
		t.Errorf("active node boot %q deploy %q last_error %q; want redfish-virtual-media, ramdisk, none",
			n.BootInterface, n.DeployInterface, n.LastError)
	}
	if n.InstanceInfo["boot_iso"] != iso {
		t.Errorf("instance_info %v, want boot_iso %s", n.InstanceInfo, iso)
	}
	st := sim.State(0)
	var used []string
	for _, m := range st.VirtualMedia {
		if m.Image == iso && m.Inserted {
			used = append(used, m.Path)
		}
	}
	if len(used) != 1 || !strings.HasSuffix(used[0], c.media) {
		t.Errorf("virtual media holding the ISO after deploy: %v, want exactly %s (devices %+v)", used, c.media, st.VirtualMedia)
	}
	if s := st.Systems[c.system]; s.Power != "On" || s.LastBoot != "Cd" || s.BootOverride.Target != "Cd" || s.BootOverride.Enabled != "Continuous" {
		t.Errorf("system %s after deploy: power %s, last boot %q, override %+v; want On, booted from Cd (persistent: Continuous)",
			s.Path, s.Power, s.LastBoot, s.BootOverride)
	}
	wantCalls(t, auditLines(t, audit)[before:], "deploy",
		"ForceOff", "VirtualMedia.InsertMedia|PATCH VirtualMedia", `"BootSourceOverrideTarget":"Cd"`, `"ResetType":"On"`)
}

// ironicProps are the node properties Ironic's redfish inspection must
// write for hardware a correct Redfish reader finds (the profile's
// expectations), by Ironic's rules: cpus the threads summed, memory_mb,
// local_gb the smallest disk of at least 4 GiB in GiB minus 1, cpu_arch
// x86_64 (every profile's processors are x86).
func ironicProps(hw wire.HardwareDetails) map[string]string {
	threads := 0
	for _, c := range hw.CPUs {
		threads += c.Threads
	}
	var smallest int64
	for _, d := range hw.Disks {
		if d.SizeBytes >= 4<<30 && (smallest == 0 || d.SizeBytes < smallest) {
			smallest = d.SizeBytes
		}
	}
	gb := 0
	if smallest > 0 {
		gb = int(float64(smallest)/(1<<30) - 1)
	}
	return map[string]string{"cpus": fmt.Sprint(threads), "cpu_arch": "x86_64",
		"memory_mb": fmt.Sprint(hw.MemoryMiB), "local_gb": fmt.Sprint(gb)}
}

// checkInspected compares what Ironic's redfish inspection wrote with the
// properties expected, and rackfence's mapping of them.
func checkInspected(t *testing.T, want map[string]string, props map[string]any, d *wire.HardwareDetails, mac string) {
	t.Helper()
	for k, want := range want {
		if got := fmt.Sprint(props[k]); got != want {
			t.Errorf("node property %s = %q, want %q (all: %v)", k, got, want, props)
		}
	}
	num := func(k string) int {
		var x int
		fmt.Sscan(fmt.Sprint(props[k]), &x)
		return x
	}
	if d == nil || d.MemoryMiB != num("memory_mb") || len(d.CPUs) != 1 || d.CPUs[0].Threads != num("cpus") ||
		d.CPUs[0].Model != fmt.Sprint(props["cpu_arch"]) {
		t.Errorf("hardware details %+v, want Ironic's properties %v mapped", d, props)
		return
	}
	if gb := num("local_gb"); gb > 0 && (len(d.Disks) != 1 || d.Disks[0].SizeBytes != int64(gb)<<30) {
		t.Errorf("disks %+v, want one of local_gb %d GiB", d.Disks, gb)
	}
	found := false
	for _, nic := range d.NICs {
		found = found || strings.EqualFold(nic.MAC, mac)
	}
	if !found {
		t.Errorf("NICs %+v do not include the boot MAC %s", d.NICs, mac)
	}
}

// forceDelete removes a node whatever its state, as an operator would
// (maintenance on, then delete), so a failed case leaves nothing behind.
func forceDelete(t *testing.T, url, id string) {
	for _, req := range []struct{ method, path, body string }{
		{http.MethodPut, "/v1/nodes/" + id + "/maintenance", `{"reason":"rackfence test cleanup"}`},
		{http.MethodDelete, "/v1/nodes/" + id, ""},
	} {
		r, _ := http.NewRequest(req.method, url+req.path, strings.NewReader(req.body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("X-OpenStack-Ironic-API-Version", ironic.Microversion)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Logf("cleanup %s %s: %v", req.method, req.path, err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
			t.Logf("cleanup %s %s: %d", req.method, req.path, resp.StatusCode)
		}
	}
}

// inventoryStatus answers GET /v1/nodes/ID/inventory's status code.
func inventoryStatus(t *testing.T, url, id string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/v1/nodes/"+id+"/inventory", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", ironic.Microversion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// logWire logs what the BMC saw during one operation: every call in the
// simulator's audit (it records the calls that change something).
func logWire(t *testing.T, op string, lines []bmcsim.AuditLine) {
	t.Helper()
	var calls []string
	for _, l := range lines {
		calls = append(calls, fmt.Sprintf("%s %s %s → %d", l.Method, l.Path, l.Body, l.Status))
	}
	t.Logf("%s: the BMC's audit shows %d calls\n  %s", op, len(calls), strings.Join(calls, "\n  "))
}

// mutating keeps the audit lines of calls that change the BMC (sessions
// are Ironic's client logging in and out, not changes).
func mutating(lines []bmcsim.AuditLine) []bmcsim.AuditLine {
	var out []bmcsim.AuditLine
	for _, l := range lines {
		if l.Method == "GET" || l.Method == "HEAD" || strings.Contains(l.Path, "SessionService") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// wantCalls checks that the audit shows, in this order, a mutating call
// matching each want: "A|B" matches either, "PATCH X" a PATCH whose path
// contains X; other wants match the path or the body.
func wantCalls(t *testing.T, lines []bmcsim.AuditLine, what string, wants ...string) {
	t.Helper()
	muts := mutating(lines)
	i := 0
	for _, w := range wants {
		found := false
		for ; i < len(muts) && !found; i++ {
			for _, alt := range strings.Split(w, "|") {
				l := muts[i]
				if m, frag, ok := strings.Cut(alt, " "); ok && m == strings.ToUpper(m) {
					found = found || (l.Method == m && strings.Contains(l.Path, frag))
				} else {
					found = found || strings.Contains(l.Path, alt) || strings.Contains(l.Body, alt)
				}
			}
		}
		if !found {
			var got []string
			for _, l := range muts {
				got = append(got, l.Method+" "+l.Path+" "+l.Body)
			}
			t.Errorf("%s: the simulator's audit has no %q in order; mutating calls:\n%s", what, w, strings.Join(got, "\n"))
			return
		}
	}
}

// With RedfishISODownload "local" Ironic itself downloads the ISO (a real
// one, built with genisoimage, served by the test), publishes it under its
// [deploy] http_root and hands the BMC its own [deploy] http_url for it;
// undeploy ejects it and removes the published copy.
func TestRedfishVirtualMediaLocalISO(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	_, err := exec.LookPath("genisoimage")
	testenv.RequirePeer(t, err == nil, "genisoimage (Debian package genisoimage)")
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("rackfence test boot ISO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(dir, "boot.iso")
	if out, err := exec.Command("genisoimage", "-quiet", "-V", "RACKFENCE", "-J", "-R", "-o", iso, src).CombinedOutput(); err != nil {
		t.Fatalf("genisoimage: %v\n%s", err, out)
	}
	isoBytes, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	var gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		http.ServeFile(w, r, iso)
	}))
	t.Cleanup(srv.Close)

	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, AuditPath: audit, PowerOn: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	p := newProv(t, url, func(c *ironic.Config) { c.RedfishISODownload = "local" })
	ctx := ctxT(t)
	h := simHost(sim, 0, uniqName("vmlocal"))
	h.Image = &wire.Image{URL: srv.URL + "/boot.iso"}
	h.ProvisioningID = must(t, "register")(p.Register(ctx, h)).ProvisioningID
	t.Cleanup(func() { _, _ = p.Delete(context.Background(), h) })
	must(t, "provide")(p.Provide(ctx, h))
	start := time.Now()
	must(t, "deploy")(p.Provision(ctx, h))
	t.Logf("deploy with a local ISO: %.1f s", time.Since(start).Seconds())
	n := wantState(t, url, h.ProvisioningID, "active")
	if n.InstanceInfo["ramdisk_image_download_source"] != "local" {
		t.Fatalf("instance_info %v, want ramdisk_image_download_source local", n.InstanceInfo)
	}
	published := filepath.Join(sharedIronic.Dir, "httpboot", "redfish", "boot-"+h.ProvisioningID+".iso")
	got, err := os.ReadFile(published)
	if err != nil || !bytes.Equal(got, isoBytes) {
		t.Fatalf("published ISO %s: %v (%d bytes, want the %d served)", published, err, len(got), len(isoBytes))
	}
	conf, err := os.ReadFile(filepath.Join(sharedIronic.Dir, "ironic.conf"))
	if err != nil {
		t.Fatal(err)
	}
	httpURL := ""
	for _, line := range strings.Split(string(conf), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "http_url" {
			httpURL = strings.TrimSpace(v)
		}
	}
	st := sim.State(0)
	if httpURL == "" || st.Media.Image != httpURL+"/redfish/boot-"+h.ProvisioningID+".iso" ||
		!st.Media.Inserted || st.Power != "On" || st.LastBoot != "Cd" {
		t.Fatalf("simulator after deploy: media %+v, power %s, last boot %q; want Ironic's http_url (%s)/redfish/boot-%s.iso",
			st.Media, st.Power, st.LastBoot, httpURL, h.ProvisioningID)
	}
	if gets.Load() < 1 {
		t.Fatalf("Ironic did not download the ISO")
	}
	t.Logf("BMC got %s; Ironic downloaded the ISO %d time(s)", st.Media.Image, gets.Load())
	must(t, "undeploy")(p.Deprovision(ctx, h))
	if st := sim.State(0); st.Media.Inserted || st.Power != "Off" {
		t.Fatalf("simulator after undeploy: media %+v, power %s", st.Media, st.Power)
	}
	if _, err := os.Stat(published); !os.IsNotExist(err) {
		t.Fatalf("published ISO still there after undeploy: %v", err)
	}
}

// A node an earlier undeploy left in "error" (Ironic could not eject: the
// BMC's virtual media lives under the system, bmcsim profile idrac) is
// deprovisioned: Deprovision resets its boot and deploy interfaces in
// maintenance, then undeploys to available.
func TestRedfishVirtualMediaUndeployFromError(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: "idrac", PowerOn: true,
		MACPrefix: fmt.Sprintf("52:57:%02x:%02x", os.Getpid()&0xff, hostSeq.Add(1)&0xff)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	p := newProv(t, url, nil)
	ctx := ctxT(t)
	h := simHost(sim, 0, uniqName("vmerr"))
	h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/" + h.Name + ".iso"}
	h.ProvisioningID = must(t, "register")(p.Register(ctx, h)).ProvisioningID
	t.Cleanup(func() { forceDelete(t, url, h.ProvisioningID) })
	must(t, "provide")(p.Provide(ctx, h))
	if _, err := p.Provision(ctx, h); err == nil || !strings.Contains(err.Error(), "VirtualMedia is missing") {
		t.Fatalf("deploy: %v, want Ironic's deploy failure on the missing VirtualMedia", err)
	}
	// What an undeploy without the reset does: Ironic's own tear down.
	req, _ := http.NewRequest(http.MethodPut, url+"/v1/nodes/"+h.ProvisioningID+"/states/provision", strings.NewReader(`{"target":"deleted"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", ironic.Microversion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var n *nodes.Node
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, _ = rawNode(t, url, h.ProvisioningID)
		if n != nil && n.ProvisionState == "error" && n.TargetProvisionState == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node after Ironic's own undeploy: %+v, want error", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(n.LastError, "Failed to tear down") || !strings.Contains(n.LastError, "VirtualMedia") {
		t.Fatalf("last_error %q, want Ironic's failed tear down on the missing VirtualMedia", n.LastError)
	}
	t.Logf("Ironic's own undeploy: error: %s", n.LastError)
	must(t, "deprovision from error")(p.Deprovision(ctx, h))
	n = wantState(t, url, h.ProvisioningID, "available")
	if n.BootInterface != "pxe" || n.DeployInterface != "direct" || n.Maintenance || n.LastError != "" {
		t.Fatalf("node boot %q deploy %q maintenance %v last_error %q; want pxe, direct, off, none",
			n.BootInterface, n.DeployInterface, n.Maintenance, n.LastError)
	}
	if st := sim.State(0); st.Power != "Off" {
		t.Fatalf("host power %s after deprovisioning, want Off", st.Power)
	}
}
