package importer

import (
	"strings"
	"testing"
)

// Every BareMetalHost example and sample of metal3's baremetal-operator
// repository (config/samples, examples/, docs/), as documents of the same
// shapes: each is applied, or refused for a reason that names a limit of
// rackfence (or a field metal3's API does not have).

const sampleSecret = "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\ntype: Opaque\ndata:\n  username: cm9vdA==\n  password: c2VjcmV0LTEyMw==\n"

func sampleSecretFor(name string) string { return strings.Replace(sampleSecret, "%s", name, 1) }

func sampleHost(name, spec string) string {
	return "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: " + name + "\n" + spec
}

func TestMetal3Samples(t *testing.T) {
	o := BMHOptions{Rack: "r1"}
	// Whole files a malformed document stops.
	for _, c := range []struct{ where, doc, want string }{
		// config/samples/metal3.io_v1alpha1_baremetalhost.yaml: kubebuilder's placeholder field.
		{"config/samples", sampleHost("sample-host", "spec:\n  # placeholder\n  bar: baz\n"), "field spec.bar is not in metal3's BareMetalHost API"},
		// examples/example-host-ironic-ansible-extra.yaml: a field BMO's CRD does not define.
		{"examples/ansible-extra", sampleSecretFor("ex-secret") + sampleHost("ex-host", "spec:\n  online: true\n  bmc:\n    address: ipmi://10.1.0.1:6230\n    credentialsName: ex-secret\n  provisionerPassthrough:\n    ironic:\n      deploy: ansible\n"),
			"field spec.provisionerPassthrough is not in metal3's BareMetalHost API"},
		// examples/demo-hosts.yaml holds a machine.openshift.io Machine.
		{"examples/demo-hosts", sampleHost("d", "") + "---\napiVersion: machine.openshift.io/v1beta1\nkind: Machine\nmetadata:\n  name: demo-worker\n  namespace: openshift-machine-api\n",
			`kind "Machine" (apiVersion "machine.openshift.io/v1beta1") is not supported`},
	} {
		objs, err := SplitObjects([]byte(c.doc))
		if err == nil {
			_, err = ConvertBMH(objs, o)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.where, err, c.want)
		}
	}

	// examples/example-host.yaml: one IPMI host and its Secret.
	in := convert(t, sampleSecretFor("ex-secret")+sampleHost("ex-host", "spec:\n  online: true\n  bmc:\n    address: ipmi://10.1.0.1:6230\n    credentialsName: ex-secret\n"), o)
	if len(in.Refused) > 0 || len(in.Hosts) != 1 || in.Records["ex-secret"].Password != "secret-123" {
		t.Errorf("example-host: refused %q, hosts %d", in.Refused, len(in.Hosts))
	}

	// examples/demo-hosts.yaml without its Machine: one host in each BMO
	// state. Two pairs share a BMC (one machine, two managers); the
	// provisioning ones read user data from another namespace than their
	// own (none).
	demo := func(name, ip, extra string) string {
		return sampleSecretFor(name+"-secret") + sampleHost(name, "  labels:\n    demo: \"\"\nspec:\n  online: true\n  bmc:\n    address: ipmi://"+ip+"\n    credentialsName: "+name+"-secret\n"+extra)
	}
	prov := "  bootMACAddress: 00:c6:14:04:61:b2\n  userData:\n    namespace: openshift-machine-api\n    name: worker-ud\n  image:\n    url: \"http://10.2.0.1/images/os.qcow2\"\n    checksum: \"http://10.2.0.1/images/os.qcow2.md5sum\"\n"
	file := sampleSecretFor("discovered-secret") + sampleHost("discovered", "") +
		sampleSecretFor("ext-secret") + sampleHost("ext", "spec:\n  online: false\n  bmc:\n    address: ipmi://10.1.0.1:6233\n    credentialsName: ext-secret\n  consumerRef:\n    name: demo-worker\n    namespace: openshift-machine-api\n") +
		demo("regerr", "10.1.0.1:6233", "") + demo("registering", "10.1.0.2:6233", "") + demo("available", "10.1.0.3:6233", "") +
		demo("inspecting", "10.1.0.4:6233", "") + demo("provisioning", "10.1.0.6:6233", prov) + demo("provisioned", "10.1.0.8:6233", prov) +
		demo("valerr", "10.1.0.8:6233", prov)
	in = convert(t, file, o)
	var hosts []string
	for _, h := range in.Hosts {
		hosts = append(hosts, h.Host.Name)
	}
	if got := strings.Join(hosts, " "); got != "discovered ext registering available inspecting" {
		t.Errorf("demo hosts applied: %s", got)
	}
	refused := strings.Join(in.Refused, "\n")
	for _, want := range []string{
		"BareMetalHost regerr: field spec.bmc.address \"ipmi://10.1.0.1:6233\" names the same machine as document 5: BareMetalHost ext",
		"BareMetalHost provisioning: spec.userData.namespace \"openshift-machine-api\" differs from the host's, which has none",
		"BareMetalHost valerr: field spec.bmc.address \"ipmi://10.1.0.8:6233\" names the same machine as document 17: BareMetalHost provisioned",
	} {
		if !strings.Contains(refused, want) {
			t.Errorf("demo refusals lack %q:\n%s", want, refused)
		}
	}
	if n := len(in.RefusedSources()); n != 4 {
		t.Errorf("%d demo hosts refused, want 4 (regerr, provisioning, provisioned, valerr):\n%s", n, refused)
	}
	if !strings.Contains(strings.Join(in.Notes, "\n"), "BareMetalHost discovered: has no spec: registered unmanaged") {
		t.Errorf("demo notes: %q", in.Notes)
	}
	// With the documents in one namespace, the provisioning hosts apply.
	in = convert(t, strings.ReplaceAll(strings.ReplaceAll(file, "    namespace: openshift-machine-api\n", ""), "10.1.0.8:6233\n    credentialsName: valerr", "10.1.0.9:6233\n    credentialsName: valerr"), o)
	if n := len(in.RefusedSources()); n != 1 || !strings.Contains(in.Refused[0], "BareMetalHost regerr") {
		t.Errorf("demo hosts in one namespace: refused %q", in.Refused)
	}
	for _, h := range in.Hosts {
		if h.Host.Name == "provisioning" && (h.Host.Image == nil || h.Host.Image.Checksum != "http://10.2.0.1/images/os.qcow2.md5sum") {
			t.Errorf("provisioning image %+v", h.Host.Image)
		}
	}

	// docs/api.md: a host read back from a running cluster, with its
	// metadata, deprecated hardwareProfile, checksum URL and status, and
	// the Secret the page shows next to it, written without a namespace.
	api := sampleHost("node-0", `  namespace: bmo
  creationTimestamp: "2021-01-02T03:04:05Z"
  finalizers: [baremetalhost.metal3.io]
  generation: 3
  resourceVersion: "4242"
  selfLink: /apis/metal3.io/v1alpha1/namespaces/bmo/baremetalhosts/node-0
  uid: 0b5f2a1e-0000-4000-8000-000000000001
spec:
  bmc:
    address: ipmi://10.3.0.19
    credentialsName: node-0-bmc-secret
  bootMACAddress: 98:03:9b:00:00:01
  consumerRef:
    apiVersion: machine.openshift.io/v1beta1
    kind: Machine
    name: node-0
    namespace: bmo
  externallyProvisioned: true
  hardwareProfile: default
  image:
    checksum: http://10.3.0.100/images/os/os.qcow2.md5sum
    url: http://10.3.0.100/images/os/os.qcow2
  online: true
  userData: {name: node-0-user-data, namespace: bmo}
  networkData: {name: node-0-network-data, namespace: bmo}
  metaData: {name: node-0-meta-data, namespace: bmo}
status:
  errorMessage: ""
  goodCredentials: {credentials: {name: node-0-bmc-secret, namespace: bmo}, credentialsVersion: "77"}
  hardware:
    cpu: {arch: x86_64, clockMegahertz: 2400, count: 8, flags: [], model: Xeon}
    firmware: {bios: {date: 01/02/2021, vendor: Dell Inc., version: 2.1.0}}
    hostname: node-0.localdomain
    nics: [{ip: 10.3.1.5, mac: "00:00:00:00:00:01", model: unknown, name: eno1, pxe: true, speedGbps: 25, vlanId: 0}]
    ramMebibytes: 0
    storage: []
    systemVendor: {manufacturer: Dell Inc., productName: PowerEdge, serialNumber: ""}
  hardwareProfile: ""
  lastUpdated: "2021-01-02T03:34:05Z"
  operationalStatus: OK
  poweredOn: true
  provisioning: {ID: 9d0c3a2e-0000-4000-8000-000000000002, image: {checksum: "", url: ""}, state: externally provisioned}
  triedCredentials: {credentials: {name: node-0-bmc-secret, namespace: bmo}, credentialsVersion: "77"}
`) + sampleSecretFor("node-0-bmc-secret")
	in = convert(t, api, o)
	if len(in.Refused) > 0 || len(in.Hosts) != 1 {
		t.Fatalf("docs/api.md host: refused %q", in.Refused)
	}
	if in.Records["node-0-bmc-secret"].Password != "secret-123" || !strings.Contains(strings.Join(in.Notes, "\n"), "Secret node-0-bmc-secret has no metadata.namespace: taken as bmo/node-0-bmc-secret") {
		t.Errorf("docs/api.md Secret without a namespace: records %v, notes %q", in.Records, in.Notes)
	}
	if h := in.Hosts[0].Host; !h.ExternallyProvisioned || h.Image.Checksum != "http://10.3.0.100/images/os/os.qcow2.md5sum" || h.MetaData == nil {
		t.Errorf("docs/api.md host: %+v", h)
	}
	if !strings.Contains(strings.Join(in.Notes, "\n"), `spec.hardwareProfile "default" ignored`) {
		t.Errorf("docs/api.md notes: %q", in.Notes)
	}

	// docs/annotations.md (statusAnnotation.md, inspectAnnotation.md): a
	// pivoted host's status in an annotation, inspection disabled with
	// hardware details given.
	ann := sampleHost("node-1", `  annotations:
    inspect.metal3.io: disabled
    inspect.metal3.io/hardwaredetails: '{"cpu":{"arch":"x86_64","count":2},"ramMebibytes":2048}'
    baremetalhost.metal3.io/status: '{"operationalStatus":"OK","provisioning":{"state":"provisioned","ID":"x","image":{"url":"http://10.3.0.1/os.img","checksum":"http://10.3.0.1/os.img.md5sum"}},"poweredOn":true}'
spec:
  online: true
  bmc: {address: "redfish://10.3.0.20/redfish/v1/Systems/1", credentialsName: node-1-bmc}
  image: {url: "http://10.3.0.1/os.img", checksum: "http://10.3.0.1/os.img.md5sum"}
`) + sampleSecretFor("node-1-bmc")
	in = convert(t, ann, o)
	if len(in.Refused) > 0 || len(in.Hosts) != 1 || !in.Hosts[0].Host.ExternallyProvisioned {
		t.Fatalf("annotated host: refused %q, hosts %+v", in.Refused, in.Hosts)
	}
	notes := strings.Join(in.Notes, "\n")
	for _, want := range []string{"adopted as externally provisioned", "inspect.metal3.io: disabled ignored", "inspect.metal3.io/hardwaredetails ignored"} {
		if !strings.Contains(notes, want) {
			t.Errorf("annotated host notes lack %q: %q", want, in.Notes)
		}
	}
}

// The hosts BMO's end-to-end tests write (a template per virtual host):
// a redfish-virtualmedia+http BMC of sushy-tools, UEFI, cleaning and
// inspection disabled, and a Secret whose stringData holds base64 text,
// which Kubernetes, metal3 and rackfence all take as written: applied,
// with a note naming the keys (never their values).
func TestMetal3E2EHostShape(t *testing.T) {
	doc := "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: vm-1-secret\ntype: Opaque\nstringData:\n  username: YWRtaW4=\n  password: cGFzc3dvcmQ=\n" +
		sampleHost("vm-1", `  annotations:
    inspect.metal3.io: disabled
spec:
  automatedCleaningMode: disabled
  online: true
  bootMACAddress: 52:54:00:6c:3c:01
  bootMode: UEFI
  bmc:
    address: redfish-virtualmedia+http://192.168.222.1:8000/redfish/v1/Systems/0e5f6c1a-0000-4000-8000-00000000a001
    credentialsName: vm-1-secret
`)
	in := convert(t, doc, BMHOptions{Rack: "r1"})
	if len(in.Refused) > 0 || len(in.Hosts) != 1 {
		t.Fatalf("e2e host: refused %q", in.Refused)
	}
	h := in.Hosts[0].Host
	if h.BootMethod != "vmedia" || h.AutomatedCleaningMode != "disabled" || h.BootMode != "UEFI" || in.Records["vm-1-secret"].Password != "cGFzc3dvcmQ=" {
		t.Errorf("e2e host %+v, record %+v", h, in.Records["vm-1-secret"])
	}
	notes := strings.Join(in.Notes, "\n")
	if !strings.Contains(notes, "Secret vm-1-secret: stringData.username and stringData.password look base64-encoded") || strings.Contains(notes, "YWRtaW4=") {
		t.Errorf("e2e notes: %q", in.Notes)
	}
	// A plain stringData login, or one of padded base64 of no text, is
	// no mistake to note.
	in = convert(t, strings.NewReplacer("YWRtaW4=", "admin", "cGFzc3dvcmQ=", "AAEC/w==").Replace(doc), BMHOptions{Rack: "r1"})
	if notes := strings.Join(in.Notes, "\n"); strings.Contains(notes, "base64") {
		t.Errorf("plain stringData noted as encoded: %q", in.Notes)
	}
}
