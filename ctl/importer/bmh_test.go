package importer

import (
	"os"
	"strings"
	"testing"
)

func convertFile(t *testing.T, path string, o BMHOptions) *Input {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := SplitObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ConvertBMH(objs, o)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestConvertBMHList(t *testing.T) {
	in := convertFile(t, "../testdata/metal3/list.yaml", BMHOptions{RackFrom: "label:rack"})
	if len(in.Refused) > 0 {
		t.Fatalf("refused: %q", in.Refused)
	}
	if len(in.Hosts) != 2 {
		t.Fatalf("%d hosts, want 2", len(in.Hosts))
	}
	w0 := in.Hosts[0].Host
	if w0.Name != "worker-0" || w0.Rack != "r1" || !w0.Online || !w0.BMC.DisableCertificateVerification {
		t.Errorf("worker-0: %+v", w0)
	}
	if w0.BMC.Address != "redfish://192.168.111.1:8000/redfish/v1/Systems/1" || w0.BMC.Credentials != "worker-0-bmc-secret" {
		t.Errorf("worker-0 bmc: %+v", w0.BMC)
	}
	if !w0.ExternallyProvisioned {
		t.Errorf("worker-0 is provisioned in metal3: it must arrive externally provisioned")
	}
	if w0.Image == nil || w0.Image.Format != "raw" || w0.Image.ChecksumType != "sha256" || w0.RootDeviceHints == nil || w0.RootDeviceHints.DeviceName != "/dev/sda" {
		t.Errorf("worker-0 image/hints: %+v %+v", w0.Image, w0.RootDeviceHints)
	}
	if w0.BootMode != "UEFI" || w0.AutomatedCleaningMode != "disabled" {
		t.Errorf("worker-0 boot/cleaning: %q %q", w0.BootMode, w0.AutomatedCleaningMode)
	}
	if w0.UserData == nil || w0.UserData.Name != "worker-0-user-data" || w0.NetworkData == nil || w0.NetworkData.Name != "worker-0-network-data" {
		t.Errorf("worker-0 data: %+v %+v", w0.UserData, w0.NetworkData)
	}
	if w0.Consumer != "Metal3Machine/metal3/test1-workers-x2k9p" {
		t.Errorf("consumer %q", w0.Consumer)
	}
	if w0.Labels["role"] != "worker" || w0.Labels["rack"] != "r1" {
		t.Errorf("labels %v", w0.Labels)
	}
	w1 := in.Hosts[1]
	if w1.Host.ExternallyProvisioned || w1.Host.BMC.Address != "ipmi://192.168.111.1:6231" {
		t.Errorf("worker-1: %+v", w1.Host)
	}
	if len(w1.PowerOff) != 1 || w1.PowerOff[0].Requester != "remediation" || w1.PowerOff[0].Mode != "hard" || !w1.PowerOff[0].PowerOff {
		t.Errorf("worker-1 power-off hold: %+v", w1.PowerOff)
	}
	if len(in.Records) != 4 {
		t.Errorf("%d records, want 4 (the service account token is not referenced): %v", len(in.Records), in.Records)
	}
	if c := in.Records["worker-0-bmc-secret"]; c.Username != "admin" || c.Password != "password" || c.Data != nil {
		t.Errorf("base64 data secret: %+v", c)
	}
	if c := in.Records["worker-1-bmc-secret"]; c.Username != "admin" || c.Password != "password" {
		t.Errorf("stringData secret: %+v", c)
	}
	if c := in.Records["worker-0-user-data"]; !strings.HasPrefix(c.Data["userData"], "#cloud-config") {
		t.Errorf("user data: %+v", c)
	}
	if !strings.Contains(strings.Join(in.Notes, "\n"), "default-token-abcde ignored") {
		t.Errorf("notes: %q", in.Notes)
	}
}

func TestConvertBMHDocuments(t *testing.T) {
	in := convertFile(t, "../testdata/metal3/documents.yaml", BMHOptions{RackFrom: "annotation:rack.example.com/rack"})
	if len(in.Refused) > 0 || len(in.Hosts) != 1 {
		t.Fatalf("hosts %d refused %q", len(in.Hosts), in.Refused)
	}
	h := in.Hosts[0]
	if h.Host.Rack != "r2" || !h.Detach || !h.Host.ExternallyProvisioned || h.Inspect {
		t.Errorf("control-plane-0: %+v", h)
	}
	if h.Host.BMC.Address != "redfish+http://192.168.111.2/redfish/v1/Systems/System.Embedded.1" {
		t.Errorf("address %q", h.Host.BMC.Address)
	}
}

func TestMapBMCAddress(t *testing.T) {
	cases := map[string]string{
		"redfish://h/redfish/v1/Systems/1":           "redfish://h/redfish/v1/Systems/1",
		"redfish+http://h:8000/redfish/v1/Systems/1": "redfish+http://h:8000/redfish/v1/Systems/1",
		"redfish+https://h/redfish/v1/Systems/1":     "redfish://h/redfish/v1/Systems/1",
		"redfish-virtualmedia+http://h/x":            "redfish+http://h/x",
		"idrac-virtualmedia://h/x":                   "redfish://h/x",
		"ilo5-virtualmedia://h/x":                    "redfish://h/x",
		"ipmi://10.0.0.1:6230":                       "ipmi://10.0.0.1:6230",
		"10.0.0.1:6230":                              "ipmi://10.0.0.1:6230",
	}
	for in, want := range cases {
		got, err := mapBMCAddress(in)
		if err != nil || got != want {
			t.Errorf("%s -> %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"idrac://h", "irmc://h", "ilo4://h", "libvirt://h", "ibmc://h"} {
		if _, err := mapBMCAddress(in); err == nil || !strings.Contains(err.Error(), strings.SplitN(in, ":", 2)[0]) {
			t.Errorf("%s: err %v, want one naming the scheme", in, err)
		}
	}
}

// hostDoc is a metal3 document of kind named after host name.
func hostDoc(kind, name, spec string) string {
	return "---\napiVersion: metal3.io/v1alpha1\nkind: " + kind + "\nmetadata:\n  name: " + name + "\nspec:\n" + spec
}

// bmhDoc builds a one-host document with extra spec and metadata YAML.
func oneBMH(meta, spec string) string {
	return "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: h1\n" + meta +
		"spec:\n  online: true\n  bmc: {address: \"redfish://h/redfish/v1/Systems/1\"}\n" + spec
}

func TestConvertBMHBadInput(t *testing.T) {
	o := BMHOptions{Rack: "r1"}
	cases := []struct {
		name, in, want string
		fatal          bool // a malformed document: an error, not a refusal
	}{
		{"unknown kind", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", `document 1: kind "ConfigMap"`, true},
		{"second document", oneBMH("", "") + "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {username: '!!notbase64'}\n", "document 2: Secret", true},
		{"no name", "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nspec: {online: true}\n", "field metadata.name is required", true},
		{"misspelt field", oneBMH("", "  bootMAC: 00:11:22:33:44:55\n"), "field spec.bootMAC is not in metal3's BareMetalHost API", true},
		{"misspelt nested field", oneBMH("", "  image: {url: \"http://i/x.img\", checksumtype: md5}\n"), "field spec.image.checksumtype is not in metal3's", true},
		{"no kind", "name: a\nrack: r1\n---\n" + oneBMH("", ""), "document 1: has no kind", true},
		{"architecture", oneBMH("", "  architecture: x86_64\n"), "spec.architecture is not supported", false},
		{"raid level", oneBMH("", "  raid: {hardwareRAIDVolumes: [{level: \"7\"}]}\n"), `field spec.raid.hardwareRAIDVolumes[0].level "7" is not one of`, false},
		{"raid misspelt", oneBMH("", "  raid: {hardwareRAIDVolumes: [{levl: \"1\"}]}\n"), "field spec.raid.hardwareRAIDVolumes[0].levl is not in metal3's BareMetalHost API", true},
		{"software raid root", oneBMH("", "  raid: {softwareRAIDVolumes: [{level: \"1\"}, {level: \"1\", rootVolume: true}]}\n"), "field spec.raid.softwareRAIDVolumes[1].rootVolume", false},
		{"firmware misspelt", oneBMH("", "  firmware: {sriov: true}\n"), "field spec.firmware.sriov is not in metal3's BareMetalHost API", true},
		{"settings name", oneBMH("", "") + hostDoc("HostFirmwareSettings", "h1", "  settings: {\"Proc Turbo\": Enabled}\n"), `field spec.settings of HostFirmwareSettings h1 (document 2) "Proc Turbo" is not a BIOS attribute name`, false},
		{"settings value", oneBMH("", "") + hostDoc("HostFirmwareSettings", "h1", "  settings: {NumCores: 1.5}\n"), "field spec.settings.NumCores of HostFirmwareSettings h1 (document 2) is 1.5: a setting is a string or an integer", false},
		{"settings list", oneBMH("", "") + hostDoc("HostFirmwareSettings", "h1", "  settings:\n  - ProcVirtualization: Enabled\n"), "HostFirmwareSettings h1: field spec.settings must be a map", true},
		{"update url", oneBMH("", "") + hostDoc("HostFirmwareComponents", "h1", "  updates: [{component: bmc, url: \"ftp://fw/bmc.bin\"}]\n"), "field spec.updates[0].url of HostFirmwareComponents h1 (document 2) must be http(s)", false},
		{"update component", oneBMH("", "") + hostDoc("HostFirmwareComponents", "h1", "  updates: [{component: bmc, url: \"http://fw/a\"}, {component: bmc, url: \"http://fw/b\"}]\n"), "field spec.updates[1].component of HostFirmwareComponents h1 (document 2)", false},
		{"update name", oneBMH("", "") + hostDoc("HostFirmwareComponents", "h1", "  updates: [{name: bmc, url: \"http://fw/a\"}]\n"), `field spec.updates[0].name is not in metal3's HostFirmwareComponents API (metal3.io/v1alpha1; kubectl apply refuses it too): metal3 names the component in "component"`, true},
		{"firmware annotation", oneBMH("", "") + strings.Replace(hostDoc("HostFirmwareComponents", "h1", "  updates: [{component: bmc, url: \"http://fw/a\"}]\n"), "  name: h1\n", "  name: h1\n  annotations: {rackfence.io/firmware: '{\"bmc\": {\"checksum\": \"md5:00\"}}'}\n", 1), "annotation rackfence.io/firmware of HostFirmwareComponents h1 (document 2): checksum of update [0]", false},
		{"policy", oneBMH("", "") + hostDoc("HostUpdatePolicy", "h1", "  firmwareUpdates: always\n"), `HostUpdatePolicy h1: field spec.firmwareUpdates "always" is not one of metal3's onPreparing, onReboot`, true},
		{"no host", oneBMH("", "") + hostDoc("HostFirmwareSettings", "h2", "  settings: {A: B}\n"), "document 2: HostFirmwareSettings h2: no BareMetalHost h2 in the input", true},
		{"two settings", oneBMH("", "") + hostDoc("HostFirmwareSettings", "h1", "  settings: {A: B}\n") + hostDoc("HostFirmwareSettings", "h1", "  settings: {A: C}\n"), "document 3: HostFirmwareSettings h1 is also document 2", true},
		{"nameless components", oneBMH("", "") + "---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata: {namespace: x}\nspec: {updates: []}\n", "HostFirmwareComponents: field metadata.name is required", true},
		{"customDeploy", oneBMH("", "  customDeploy: {method: install_coreos}\n"), "spec.customDeploy", false},
		{"scheme", oneBMH("", "  bmc: {address: \"irmc://h\"}\n"), `scheme "irmc"`, false},
		{"paused", oneBMH("  annotations: {baremetalhost.metal3.io/paused: \"\"}\n", ""), "baremetalhost.metal3.io/paused is not supported", false},
		{"bad mac", oneBMH("", "  bootMACAddress: nope\n"), "field spec.bootMACAddress", false},
		{"checksum URL without host", oneBMH("", "  image: {url: \"http://i/x.img\", checksum: \"http:///x.img.sha256sum\"}\n"), "field spec.image.checksum", false},
		{"bad boot mode", oneBMH("", "  bootMode: bios\n"), "field spec.bootMode", false},
		{"bad reboot mode", oneBMH("  annotations: {reboot.metal3.io: '{\"mode\":\"warm\"}'}\n", ""), `mode "warm"`, false},
		{"secret other namespace", oneBMH("  namespace: a\n", "  userData: {name: u, namespace: b}\n"), "spec.userData.namespace", false},
	}
	for _, tc := range cases {
		objs, err := SplitObjects([]byte(tc.in))
		var in *Input
		if err == nil {
			in, err = ConvertBMH(objs, o)
		}
		if tc.fatal {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(in.Hosts) != 0 || len(in.Refused) == 0 || !strings.Contains(strings.Join(in.Refused, "\n"), tc.want) {
			t.Errorf("%s: hosts %d, refused %q; want a refusal containing %q", tc.name, len(in.Hosts), in.Refused, tc.want)
		}
	}
}

func TestConvertBMHNamespaces(t *testing.T) {
	doc := func(ns string) string {
		return "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: h-" + ns + ", namespace: " + ns + "}\n" +
			"spec: {online: true, bmc: {address: \"ipmi://h-" + ns + "\", credentialsName: bmc}}\n---\n" +
			"apiVersion: v1\nkind: Secret\nmetadata: {name: bmc, namespace: " + ns + "}\nstringData: {username: u, password: p}\n---\n"
	}
	objs, err := SplitObjects([]byte(doc("a") + doc("b")))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ConvertBMH(objs, BMHOptions{Rack: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Refused) != 1 || !strings.Contains(in.Refused[0], "--namespace-prefix") {
		t.Errorf("same Secret name in two namespaces: refused %q", in.Refused)
	}
	in, err = ConvertBMH(objs, BMHOptions{Rack: "r1", NamespacePrefix: true})
	if err != nil || len(in.Refused) != 0 || len(in.Records) != 2 || in.Hosts[1].Host.BMC.Credentials != "b-bmc" {
		t.Errorf("--namespace-prefix: %v %q %v", err, in.Refused, in.Records)
	}
}

// FuzzConvertBMH: no input makes the metal3 reader panic, and every host
// it accepts passed validation (has a name and a rack).
func FuzzConvertBMH(f *testing.F) {
	for _, p := range []string{"../testdata/metal3/list.yaml", "testdata/metal3/documents.yaml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(oneBMH("  annotations: {reboot.metal3.io/x: '{\"mode\":\"soft\"}'}\n", "  userData: {name: u}\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := SplitObjects(data)
		if err != nil {
			return
		}
		in, err := ConvertBMH(objs, BMHOptions{Rack: "r1"})
		if err != nil {
			return
		}
		for _, h := range in.Hosts {
			if h.Host.Name == "" || h.Host.Rack == "" {
				t.Fatalf("accepted a host without name or rack: %+v", h.Host)
			}
		}
	})
}
