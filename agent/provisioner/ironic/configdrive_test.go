package ironic_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// isoFile extracts one file of an ISO 9660 image with isoinfo (a real ISO
// reader, Debian's genisoimage package), Rock Ridge names.
func isoFile(t *testing.T, iso, path string) []byte {
	t.Helper()
	out, err := exec.Command("isoinfo", "-i", iso, "-R", "-x", path).Output()
	if err != nil {
		t.Fatalf("isoinfo -x %s: %v", path, err)
	}
	return out
}

// jsonEqual compares a JSON document with a value decoded the same way.
func jsonEqual(t *testing.T, what string, got []byte, want any) {
	t.Helper()
	var g any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s is not JSON: %v (%q)", what, err, got)
	}
	wb, _ := json.Marshal(want)
	var w any
	json.Unmarshal(wb, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, wb)
	}
}

// TestConfigDriveFakeHardware: the ramdisk's network data becomes the
// node's network_data at registration; the deploy carries the config
// drive and the real Ironic builds it. The ISO Ironic stored
// (instance_info.configdrive, gzip+base64) is read back with isoinfo and
// every file checked: volume label config-2, user_data byte for byte,
// network_data.json, meta_data.json (uuid, name, hostname from rackfence,
// the record's keys merged over them).
func TestConfigDriveFakeHardware(t *testing.T) {
	url := needIronic(t)
	testenv.RequirePeer(t, haveTool("isoinfo"), "isoinfo (apt-get install genisoimage) is needed to read the config drive back")
	p := newProv(t, url, fakeHW)
	ctx := ctxT(t)
	h := fakeHost("cfgdrive")
	pnd := map[string]any{"links": []any{map[string]any{"id": "eth0", "type": "phy", "ethernet_mac_address": h.BootMACAddress}},
		"networks": []any{map[string]any{"id": "prov", "link": "eth0", "network_id": "prov", "type": "ipv4_dhcp"}}, "services": []any{}}
	h.PreprovisioningNetworkData, _ = json.Marshal(pnd)

	r := must(t, "register")(p.Register(ctx, h))
	h.ProvisioningID = r.ProvisioningID
	n := wantState(t, url, h.ProvisioningID, "manageable")
	if !reflect.DeepEqual(n.NetworkData, pnd) {
		t.Fatalf("node network_data = %v, want %v", n.NetworkData, pnd)
	}
	must(t, "provide")(p.Provide(ctx, h))
	wantState(t, url, h.ProvisioningID, "available")

	userData := "#cloud-config\nssh_authorized_keys:\n  - ssh-ed25519 AAAAC3Nza rf@test\n# ünïcode\n"
	netData := map[string]any{"links": []any{map[string]any{"id": "eth0", "type": "phy", "ethernet_mac_address": h.BootMACAddress}},
		"networks": []any{map[string]any{"id": "n0", "link": "eth0", "network_id": "n0", "type": "ipv4", "ip_address": "192.0.2.10", "netmask": "255.255.255.0"}},
		"services": []any{map[string]any{"type": "dns", "address": "192.0.2.1"}}}
	metaData := map[string]any{"public_keys": map[string]any{"k0": "ssh-ed25519 AAAAC3Nza rf@test"}, "hostname": "from-the-record"}
	nd, _ := json.Marshal(netData)
	md, _ := json.Marshal(metaData)
	h.ConfigDrive = &provisioner.ConfigDrive{UserData: []byte(userData), NetworkData: nd, MetaData: md}
	h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/disk.img", Checksum: strings.Repeat("ab", 32), ChecksumType: "sha256", Format: "raw"}
	start := time.Now()
	must(t, "provision")(p.Provision(ctx, h))
	t.Logf("provision with a config drive on the real Ironic (fake-hardware): %.2f s", time.Since(start).Seconds())
	n = wantState(t, url, h.ProvisioningID, "active")

	// Ironic's API masks the config drive (policy show_instance_secrets):
	// read what it stored from its database. Ironic 21.4 keeps the object
	// as given (field by field below) and builds the ISO when the deploy
	// interface writes it (conductor utils.get_configdrive_image); that
	// same Ironic function builds it here, and isoinfo reads every file.
	if n.InstanceInfo["configdrive"] != "******" {
		t.Errorf("Ironic's API shows instance_info.configdrive as %.40q…, expected it masked", n.InstanceInfo["configdrive"])
	}
	stored, ok := storedInstanceInfo(t, sharedIronic.Dir, h.ProvisioningID)["configdrive"].(map[string]any)
	if !ok {
		t.Fatalf("instance_info.configdrive in Ironic's database is not the object sent: %v", storedInstanceInfo(t, sharedIronic.Dir, h.ProvisioningID))
	}
	wantMD := map[string]any{"uuid": h.ProvisioningID, "name": h.Name, "hostname": "from-the-record",
		"local-hostname": h.Name, "local_hostname": h.Name, "public_keys": metaData["public_keys"]}
	if stored["user_data"] != userData {
		t.Errorf("stored user_data = %q, want %q", stored["user_data"], userData)
	}
	sb, _ := json.Marshal(stored["network_data"])
	jsonEqual(t, "stored network_data", sb, netData)
	sb, _ = json.Marshal(stored["meta_data"])
	jsonEqual(t, "stored meta_data", sb, wantMD)
	raw := ironicBuildConfigDrive(t, stored, h.ProvisioningID, h.Name)
	gz, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		t.Fatalf("the built config drive is not base64 (%.40q…): %v", raw, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	img, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(t.TempDir(), "configdrive.iso")
	if err := os.WriteFile(iso, img, 0o600); err != nil {
		t.Fatal(err)
	}
	desc, err := exec.Command("isoinfo", "-d", "-i", iso).Output()
	if err != nil || !strings.Contains(string(desc), "Volume id: config-2") {
		t.Fatalf("isoinfo -d: %v\n%s", err, desc)
	}
	if got := isoFile(t, iso, "/openstack/latest/user_data"); string(got) != userData {
		t.Errorf("user_data = %q, want %q", got, userData)
	}
	jsonEqual(t, "network_data.json", isoFile(t, iso, "/openstack/latest/network_data.json"), netData)
	jsonEqual(t, "meta_data.json", isoFile(t, iso, "/openstack/latest/meta_data.json"), wantMD)

	// Undeploy; the spec drops the ramdisk's network data: the node's goes.
	must(t, "deprovision")(p.Deprovision(ctx, h))
	h.PreprovisioningNetworkData, h.ConfigDrive = nil, nil
	must(t, "register again")(p.Register(ctx, h))
	if n = wantState(t, url, h.ProvisioningID, "available"); len(n.NetworkData) != 0 {
		t.Errorf("network_data = %v after the spec dropped it", n.NetworkData)
	}
	must(t, "delete")(p.Delete(ctx, h))
}

func haveTool(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// storedInstanceInfo reads a node's instance_info as Ironic stored it in
// its database (STATEDIR/ironic.sqlite, through the sqlite3 module of the
// Python Ironic runs on).
func storedInstanceInfo(t *testing.T, dir, uuid string) map[string]any {
	t.Helper()
	const q = `import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
r = c.execute("SELECT instance_info FROM nodes WHERE uuid = ?", (sys.argv[2],)).fetchone()
sys.stdout.write(r[0] if r and r[0] else "{}")`
	out, err := exec.Command(ironicPython, "-c", q, filepath.Join(dir, "ironic.sqlite"), uuid).Output()
	if err != nil {
		t.Fatalf("read instance_info of node %s from Ironic's database: %v", uuid, err)
	}
	var ii map[string]any
	if err := json.Unmarshal(out, &ii); err != nil {
		t.Fatalf("instance_info of node %s in Ironic's database: %v (%.200q)", uuid, err, out)
	}
	return ii
}

// ironicPython is the interpreter Debian's Ironic runs on (as
// deploy/peers/ironic.sh starts it: a python3 earlier on PATH may not see
// the ironic package).
const ironicPython = "/usr/bin/python3"

// ironicBuildConfigDrive builds the config drive of a stored configdrive
// object with Ironic's own code (conductor utils.build_configdrive, what
// the deploy runs): gzip+base64 of the ISO.
func ironicBuildConfigDrive(t *testing.T, cd map[string]any, uuid, name string) string {
	t.Helper()
	const q = `import sys, json, types
from ironic.conductor import utils
node = types.SimpleNamespace(uuid=sys.argv[1], name=sys.argv[2])
sys.stdout.write(utils.build_configdrive(node, json.load(sys.stdin)))`
	in, _ := json.Marshal(cd)
	cmd := exec.Command(ironicPython, "-c", q, uuid, name)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("Ironic's build_configdrive: %v\n%s", err, stderr.String())
	}
	return string(out)
}
