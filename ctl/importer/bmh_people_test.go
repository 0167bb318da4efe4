package importer

import (
	"strings"
	"testing"
)

// The metal3 documents people write: checksum URLs, hosts without a spec,
// Secrets without a password, metal3 fields rackfence does not map, two
// hosts for one BMC, documents without a namespace.

func convert(t *testing.T, doc string, o BMHOptions) *Input {
	t.Helper()
	objs, err := SplitObjects([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	in, err := ConvertBMH(objs, o)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func named(name, doc string) string { return strings.Replace(doc, "name: h1", "name: "+name, 1) }

func secret(name, data string) string {
	return "---\napiVersion: v1\nkind: Secret\nmetadata: {name: " + name + "}\n" + data + "\n"
}

func TestConvertBMHChecksumURL(t *testing.T) {
	in := convert(t, oneBMH("", "  image: {url: \"http://i/img/x.qcow2\", checksum: \"http://i/img/x.qcow2.md5sum\", checksumType: md5}\n"), BMHOptions{Rack: "r1"})
	if len(in.Refused) > 0 || len(in.Hosts) != 1 {
		t.Fatalf("refused %q", in.Refused)
	}
	if im := in.Hosts[0].Host.Image; im.Checksum != "http://i/img/x.qcow2.md5sum" || im.ChecksumType != "md5" {
		t.Errorf("image %+v", im)
	}
}

func TestConvertBMHCountsHostsNotReasons(t *testing.T) {
	three := oneBMH("  annotations: {baremetalhost.metal3.io/paused: \"\"}\n", "  architecture: x86_64\n  customDeploy: {method: x}\n")
	in := convert(t, three, BMHOptions{Rack: "r1"})
	if len(in.Refused) != 3 || len(in.RefusedSources()) != 1 {
		t.Fatalf("refused %q from %q: want 3 reasons of 1 host", in.Refused, in.RefusedSources())
	}
}

func TestConvertBMHEmptyPassword(t *testing.T) {
	host := oneBMH("", "")
	host = strings.Replace(host, `bmc: {address: "redfish://h/redfish/v1/Systems/1"}`, `bmc: {address: "redfish://h/redfish/v1/Systems/1", credentialsName: h1-bmc}`, 1)
	for _, c := range []struct{ data, want string }{
		{"stringData: {username: admin, password: \"\"}", "Secret h1-bmc (document 2) has an empty password"},
		{"data: {username: YWRtaW4=, password: \"\"}", "has an empty password"},
		{"stringData: {username: admin}", "has no password"},
		{"stringData: {password: x}", "has no username"},
	} {
		in := convert(t, host+secret("h1-bmc", c.data), BMHOptions{Rack: "r1"})
		if len(in.Hosts) != 0 || !strings.Contains(strings.Join(in.Refused, "\n"), c.want) {
			t.Errorf("%s: hosts %d, refused %q; want %q", c.data, len(in.Hosts), in.Refused, c.want)
		}
	}
	// An empty key in a Secret used for user data is its content.
	ud := oneBMH("", "  userData: {name: ud}\n") + secret("ud", "stringData: {userData: \"\", password: \"\"}")
	if in := convert(t, ud, BMHOptions{Rack: "r1"}); len(in.Refused) > 0 {
		t.Errorf("user data Secret: refused %q", in.Refused)
	}
}

func TestConvertBMHNoSpec(t *testing.T) {
	doc := "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: discovered\n"
	in := convert(t, doc+secret("discovered-secret", "stringData: {username: a, password: b}"), BMHOptions{Rack: "r1"})
	if len(in.Refused) > 0 || len(in.Hosts) != 1 {
		t.Fatalf("refused %q", in.Refused)
	}
	h := in.Hosts[0].Host
	if h.BMC.Address != "" || h.BMC.Credentials != "" || h.Online || h.Image != nil {
		t.Errorf("host without spec: %+v", h)
	}
	notes := strings.Join(in.Notes, "\n")
	if !strings.Contains(notes, "BareMetalHost discovered: has no spec: registered unmanaged") || !strings.Contains(notes, "Secret discovered-secret ignored") {
		t.Errorf("notes %q", in.Notes)
	}
}

func TestConvertBMHMetal3Fields(t *testing.T) {
	o := BMHOptions{Rack: "r1"}
	refused := []struct{ spec, want string }{
		{"  networkInterfaces: [{name: eth0, hostNetworkAttachment: {name: a}}]\n", "spec.networkInterfaces is not supported: a metal3 field rackfence does not support"},
		{"  disablePowerOff: true\n", "spec.disablePowerOff is not supported: a metal3 field"},
		{"  image: {url: \"oci://r/i\", ociAuthSecretName: pull}\n", "spec.image.ociAuthSecretName is not supported"},
		{"  inspectionMode: slow\n", `spec.inspectionMode "slow"`},
	}
	for _, c := range refused {
		in := convert(t, oneBMH("", c.spec), o)
		if len(in.Hosts) != 0 || !strings.Contains(strings.Join(in.Refused, "\n"), c.want) {
			t.Errorf("%s: refused %q, want %q", c.spec, in.Refused, c.want)
		}
	}
	noted := []struct{ spec, note string }{
		{"  disablePowerOff: false\n", ""},
		{"  inspectionMode: agent\n", ""},
		{"  inspectionMode: disabled\n", "spec.inspectionMode: disabled ignored"},
		{"  taints: [{key: k, effect: NoSchedule}]\n", "spec.taints ignored"},
		{"  hardwareProfile: libvirt\n", `spec.hardwareProfile "libvirt" (deprecated in metal3) mapped to its root disk: rootDeviceHints deviceName /dev/vda`},
		{"  hardwareProfile: default\n", `spec.hardwareProfile "default" ignored`},
		{"  hardwareProfile: dell\n  rootDeviceHints: {deviceName: /dev/sdb}\n", "spec.rootDeviceHints choose the root disk"},
		{"  consumerRef: {apiVersion: v1, kind: Machine, name: m, namespace: ns, uid: \"1234\"}\n", ""},
	}
	for _, c := range noted {
		in := convert(t, oneBMH("", c.spec), o)
		if len(in.Refused) > 0 || len(in.Hosts) != 1 {
			t.Errorf("%s: refused %q", c.spec, in.Refused)
			continue
		}
		if notes := strings.Join(in.Notes, "\n"); c.note != "" && !strings.Contains(notes, c.note) || c.note == "" && notes != "" {
			t.Errorf("%s: notes %q, want %q", c.spec, in.Notes, c.note)
		}
	}
	in := convert(t, oneBMH("", "  hardwareProfile: dell-raid\n"), o)
	if rd := in.Hosts[0].Host.RootDeviceHints; rd == nil || rd.HCTL != "0:2:0:0" {
		t.Errorf("dell-raid profile: hints %+v", rd)
	}
}

func TestSameMachine(t *testing.T) {
	same := [][2]string{
		{"redfish://bmc/redfish/v1/Systems/1", "redfish://BMC:443/redfish/v1/Systems/1/"},
		{"redfish://bmc/redfish/v1/Systems/1", "redfish://bmc"},
		{"ipmi://10.0.0.1", "ipmi://10.0.0.1:623"},
		{"redfish+http://bmc:8000/redfish/v1/Systems/a", "redfish+http://bmc:8000/redfish/v1/Systems/a"},
	}
	differ := [][2]string{
		{"redfish://bmc:8000/redfish/v1/Systems/a", "redfish://bmc:8000/redfish/v1/Systems/b"},
		{"ipmi://192.168.122.1:6233", "ipmi://192.168.122.1:6234"},
		{"redfish://bmc1/redfish/v1/Systems/1", "redfish://bmc2/redfish/v1/Systems/1"},
		{"redfish://bmc/redfish/v1/Systems/1", ""},
	}
	sameMachine := func(a, b string) bool {
		x := NewMachineIndex()
		x.Add(a, "a")
		who, theirs, ok := x.Find(b)
		if ok && (who != "a" || theirs != a) {
			t.Errorf("%s in the index, %s found: %q %q", a, b, who, theirs)
		}
		return ok
	}
	for _, p := range same {
		if !sameMachine(p[0], p[1]) || !sameMachine(p[1], p[0]) {
			t.Errorf("%s and %s: not the same machine", p[0], p[1])
		}
	}
	for _, p := range differ {
		if sameMachine(p[0], p[1]) || sameMachine(p[1], p[0]) {
			t.Errorf("%s and %s: the same machine", p[0], p[1])
		}
	}
}

func TestConvertBMHSameBMCInFile(t *testing.T) {
	o := BMHOptions{Rack: "r1"}
	addr := func(name, a string) string {
		return strings.Replace(named(name, oneBMH("", "")), `"redfish://h/redfish/v1/Systems/1"`, `"`+a+`"`, 1)
	}
	// BMO's scheme variants of one address name one machine.
	for _, a := range []string{"redfish+https://h/redfish/v1/Systems/1", "idrac-redfish://h/redfish/v1/Systems/1", "ilo5-virtualmedia://h:443/redfish/v1/Systems/1/", "redfish-virtualmedia://H"} {
		in := convert(t, addr("a", "redfish://h/redfish/v1/Systems/1")+"---\n"+addr("b", a), o)
		if len(in.Hosts) != 1 || len(in.RefusedSources()) != 1 || !strings.Contains(in.Refused[0], "BareMetalHost b: field spec.bmc.address") ||
			!strings.Contains(in.Refused[0], "names the same machine as document 1: BareMetalHost a") {
			t.Errorf("%s: hosts %d, refused %q", a, len(in.Hosts), in.Refused)
		}
	}
	// Different systems of one BMC, different ports of one virtual BMC.
	in := convert(t, addr("a", "redfish://h:8000/redfish/v1/Systems/a")+"---\n"+addr("b", "redfish-virtualmedia://h:8000/redfish/v1/Systems/b")+
		"---\n"+addr("c", "ipmi://10.0.0.1:6230")+"---\n"+addr("d", "10.0.0.1:6231"), o)
	if len(in.Refused) > 0 || len(in.Hosts) != 4 {
		t.Errorf("different systems: refused %q", in.Refused)
	}
}

func TestConvertBMHNoNamespaceMessages(t *testing.T) {
	in := convert(t, oneBMH("", "  userData: {name: u, namespace: openshift-machine-api}\n"), BMHOptions{Rack: "r1"})
	got := strings.Join(in.Refused, "\n")
	if strings.Contains(got, `namespace ""`) || !strings.Contains(got, "differs from the host's, which has none (no metadata.namespace)") {
		t.Errorf("refused %q", in.Refused)
	}
	in = convert(t, oneBMH("", "")+secret("lonely", "stringData: {username: a, password: b}"), BMHOptions{Rack: "r1"})
	if notes := strings.Join(in.Notes, "\n"); strings.Contains(notes, "Secret /") || !strings.Contains(notes, "Secret lonely ignored") {
		t.Errorf("notes %q", in.Notes)
	}
	in = convert(t, strings.Replace(oneBMH("", ""), "name: h1\n", "name: h1\n  namespace: ns\n", 1)+secret("other", "stringData: {username: a, password: b}"), BMHOptions{Rack: "r1"})
	if notes := strings.Join(in.Notes, "\n"); !strings.Contains(notes, "Secret other ignored") {
		t.Errorf("notes %q", in.Notes)
	}
}
