package importer

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/rackfence/rackfence/shared/wire"
)

// The day-two documents of metal3's baremetal-operator (config/samples)
// and of its user guide (metal3-docs: firmware_settings.md,
// firmware_updates.md, live_updates_servicing.md, raid.md), as documents
// of the same shapes: each maps onto its BareMetalHost, or is refused
// naming the document and the field.

func TestMetal3DayTwoSamples(t *testing.T) {
	o := BMHOptions{Rack: "r1"}
	worker := sampleHost("worker-0", "  namespace: my-cluster\nspec:\n  online: true\n  bmc: {address: \"redfish://10.1.0.1/redfish/v1/Systems/1\"}\n")
	// config/samples: settings written as a list, updates naming the
	// component "name" and a document without metadata.name.
	for _, c := range []struct{ where, doc, want string }{
		{"config/samples hostfirmwaresettings", sampleHost("hostfirmwaresettings-sample", "spec: {online: true, bmc: {address: \"ipmi://10.1.0.9\"}}\n") +
			"---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata:\n  name: hostfirmwaresettings-sample\nspec:\n  settings:\n  - \"ProcVirtualization\": \"Enabled\"\n  - \"SRIOV\": \"Enabled\"\n  - \"NetworkBootRetryCount\": \"20\"\nstatus:\n  settings:\n  - \"ProcVirtualization\": \"Enabled\"\n",
			"document 3: HostFirmwareSettings hostfirmwaresettings-sample: field spec.settings must be a map of setting name to value"},
		{"config/samples hostfirmwarecomponents", "apiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata:\n  namespace: host3firmwarecomponents.metal3.io\nspec:\n  updates:\n  - name: bios\n    url: https://myurl.with.firmware.for.bios\n",
			"document 1: HostFirmwareComponents: field metadata.name is required"},
		{"config/samples hostfirmwarecomponents named", worker + "---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata:\n  name: worker-0\n  namespace: my-cluster\nspec:\n  updates:\n  - name: bios\n    url: https://myurl.with.firmware.for.bios\n",
			"field spec.updates[0].name is not in metal3's HostFirmwareComponents API"},
	} {
		objs, err := SplitObjects([]byte(c.doc))
		if err == nil {
			_, err = ConvertBMH(objs, o)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.where, err, c.want)
		}
	}

	// firmware_settings.md: what BMO creates (status, owner, empty spec)
	// and its FirmwareSchema; then a change with a YAML boolean.
	created := `---
apiVersion: metal3.io/v1alpha1
kind: HostFirmwareSettings
metadata:
  creationTimestamp: "2024-05-28T16:31:06Z"
  generation: 1
  name: worker-0
  namespace: my-cluster
  ownerReferences:
  - {apiVersion: metal3.io/v1alpha1, blockOwnerDeletion: true, controller: true, kind: BareMetalHost, name: worker-0, uid: 663a1453-d4d8-43a3-b459-64ea94d1435f}
  resourceVersion: "20653"
spec:
  settings: {}
status:
  conditions:
  - {lastTransitionTime: "2024-05-28T16:31:06Z", message: "", observedGeneration: 1, reason: Success, status: "True", type: Valid}
  lastUpdated: "2024-05-28T16:31:06Z"
  schema: {name: schema-f229959d, namespace: my-cluster}
  settings: {BootMode: Uefi, NumCores: "10", ProcTurboMode: Enabled, QuietBoot: "true"}
---
apiVersion: metal3.io/v1alpha1
kind: FirmwareSchema
metadata:
  name: schema-f229959d
  namespace: my-cluster
spec:
  hardwareModel: KVM (8.6.0)
  hardwareVendor: Red Hat
  schema:
    BootMode: {allowable_values: [Bios, Uefi], attribute_type: Enumeration, read_only: false}
    NumCores: {attribute_type: Integer, lower_bound: 10, read_only: true, unique: false, upper_bound: 20}
`
	in := convert(t, worker+created, o)
	if len(in.Refused) > 0 || len(in.Hosts) != 1 || in.Hosts[0].Host.BIOS != nil {
		t.Fatalf("BMO's own HostFirmwareSettings: refused %q, hosts %+v", in.Refused, in.Hosts)
	}
	if notes := strings.Join(in.Notes, "\n"); !strings.Contains(notes, "document 4: FirmwareSchema my-cluster/schema-f229959d ignored: it is what a BMC's BIOS attribute registry gives") {
		t.Errorf("FirmwareSchema note missing: %q", in.Notes)
	}
	changed := strings.Replace(created, "  settings: {}\n", "  settings:\n    QuietBoot: true\n    NumCores: 12\n    ProcTurboMode: Enabled\n", 1)
	in = convert(t, worker+changed, o)
	if len(in.Refused) > 0 || len(in.Hosts) != 1 {
		t.Fatalf("changed settings: refused %q", in.Refused)
	}
	if b := in.Hosts[0].Host.BIOS; b == nil || b.Settings["QuietBoot"] != "true" || b.Settings["NumCores"] != "12" || b.Settings["ProcTurboMode"] != "Enabled" || len(b.Settings) != 3 {
		t.Errorf("settings: %+v", b)
	}

	// firmware_updates.md and live_updates_servicing.md: components with
	// a URL only, and the policy that lets a provisioned host take them.
	hfc := `---
apiVersion: metal3.io/v1alpha1
kind: HostFirmwareComponents
metadata:
  name: worker-0
  namespace: my-cluster
spec:
  updates:
  - component: bios
    url: http://10.6.48.30:8080/firmimgFIT.d9
  - component: bmc
    url: https://newfirmwareforcomponent/file
status:
  components:
  - {component: bios, currentVersion: 2.13.3, initialVersion: 2.13.3}
  - {component: bmc, currentVersion: 6.10.30.00, initialVersion: 6.10.80.00, lastVersionFlashed: 6.10.30.00, updatedAt: "2024-08-06T16:54:16Z"}
---
apiVersion: metal3.io/v1alpha1
kind: HostUpdatePolicy
metadata:
  name: worker-0
  namespace: my-cluster
spec:
  firmwareSettings: onReboot
  firmwareUpdates: onReboot
`
	in = convert(t, hfc+worker, o)
	if len(in.Refused) > 0 || len(in.Hosts) != 1 {
		t.Fatalf("components: refused %q", in.Refused)
	}
	h := in.Hosts[0].Host
	if len(h.Firmware) != 2 || h.Firmware[0] != (wire.FirmwareComponent{Component: "bios", URL: "http://10.6.48.30:8080/firmimgFIT.d9"}) || h.Firmware[1].Component != "bmc" {
		t.Errorf("firmware %+v", h.Firmware)
	}
	if p := h.UpdatePolicy; p == nil || p.FirmwareSettings != wire.UpdatePolicyOnReboot || p.FirmwareUpdates != wire.UpdatePolicyOnReboot {
		t.Errorf("policy %+v", p)
	}
	if notes := strings.Join(in.Notes, "\n"); !strings.Contains(notes, "HostFirmwareComponents my-cluster/worker-0 (document 2): bios, bmc carry no checksum and no version") {
		t.Errorf("no note on the missing checksum and version: %q", in.Notes)
	}
	in = convert(t, strings.ReplaceAll(hfc, "onReboot", "onPreparing")+worker, o)
	if p := in.Hosts[0].Host.UpdatePolicy; p == nil || *p != (wire.UpdatePolicy{}) {
		t.Errorf("onPreparing is rackfence's empty policy: %+v", p)
	}

	// raid.md: automatic and manual hardware RAID, removal, software RAID;
	// and the deprecated spec.firmware switches.
	raid := func(spec string) wire.Host {
		t.Helper()
		in := convert(t, worker+spec, o)
		if len(in.Refused) > 0 || len(in.Hosts) != 1 {
			t.Fatalf("%s: refused %q", spec, in.Refused)
		}
		return in.Hosts[0].Host
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for _, c := range []struct{ spec, want string }{
		{"  raid:\n    hardwareRAIDVolumes:\n    - name: volume1\n      level: \"5\"\n      numberOfPhysicalDisks: 3\n      sizeGibibytes: 350\n",
			`{"hardwareRAIDVolumes":[{"name":"volume1","level":"5","sizeGibibytes":350,"numberOfPhysicalDisks":3}]}`},
		{"  raid:\n    hardwareRAIDVolumes:\n    - name: volume2\n      level: \"0\"\n      controller: RAID.Integrated.1-1\n      physicalDisks:\n      - Disk.Bay.5:Enclosure.Internal.0-1:RAID.Integrated.1-1\n      - Disk.Bay.6:Enclosure.Internal.0-1:RAID.Integrated.1-1\n",
			`{"hardwareRAIDVolumes":[{"name":"volume2","level":"0","controller":"RAID.Integrated.1-1","physicalDisks":["Disk.Bay.5:Enclosure.Internal.0-1:RAID.Integrated.1-1","Disk.Bay.6:Enclosure.Internal.0-1:RAID.Integrated.1-1"]}]}`},
		{"  raid:\n    hardwareRAIDVolumes: []\n", `{}`},
		{"  raid:\n    softwareRAIDVolumes:\n    - level: \"1\"\n      sizeGibibytes: 10\n    - level: \"0\"\n", `{"softwareRAIDVolumes":[{"level":"1","sizeGibibytes":10},{"level":"0"}]}`},
		{"  raid:\n    softwareRAIDVolumes:\n    - level: \"1\"\n      rootVolume: true\n      physicalDisks:\n      - serialNumber: abcd\n      - serialNumber: efgh\n",
			`{"softwareRAIDVolumes":[{"level":"1","physicalDisks":[{"serialNumber":"abcd"},{"serialNumber":"efgh"}]}]}`},
		{"  raid:\n    softwareRAIDVolumes: []\n", `{}`},
	} {
		if got := js(raid(c.spec).RAID); got != c.want {
			t.Errorf("%s: raid %s, want %s", c.spec, got, c.want)
		}
	}
	if h := raid("  raid: {}\n"); h.RAID != nil {
		t.Errorf("raid without volumes must leave them: %+v", h.RAID)
	}
	if h := raid("  firmware: {virtualizationEnabled: true, simultaneousMultithreadingEnabled: false, sriovEnabled: true}\n"); js(h.BIOS) != `{"simultaneousMultithreadingEnabled":false,"sriovEnabled":true,"virtualizationEnabled":true}` {
		t.Errorf("spec.firmware: %s", js(h.BIOS))
	}
}

// TestExportDayTwoRoundTrip: what ExportBMH and ExportDayTwo write maps
// back onto the same host, fields metal3 has no place for included.
func TestExportDayTwoRoundTrip(t *testing.T) {
	yes, no, n := true, false, 2
	h := wire.Host{Name: "h1", Rack: "r1", BMC: wire.BMC{Address: "redfish://10.1.0.1/redfish/v1/Systems/1"},
		BIOS: &wire.BIOSSpec{VirtualizationEnabled: &yes, SRIOVEnabled: &no, Settings: map[string]string{"ProcTurboMode": "Enabled", "NumCores": "12"}},
		Firmware: []wire.FirmwareComponent{
			{Component: "bmc", URL: "https://fw/bmc.bin", Checksum: "sha256:" + strings.Repeat("ab", 32), Version: "7.10", Timeout: wire.Duration(90 * 60e9)},
			{Component: "bios", URL: "https://fw/bios.bin"}},
		RAID:         &wire.RAIDSpec{KeepExisting: true, HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Name: "root", Level: "1", NumberOfPhysicalDisks: &n}}},
		UpdatePolicy: &wire.UpdatePolicy{FirmwareUpdates: wire.UpdatePolicyOnReboot}}
	for _, c := range []func(*wire.Host){
		func(*wire.Host) {},
		func(h *wire.Host) { h.RAID = &wire.RAIDSpec{} }, // delete the volumes
		func(h *wire.Host) {
			h.RAID = &wire.RAIDSpec{SoftwareRAIDVolumes: []wire.SoftwareRAIDVolume{{Level: "1"}}}
			h.UpdatePolicy = &wire.UpdatePolicy{}
			h.BIOS.Settings = nil
		},
	} {
		want := h
		c(&want)
		b, _ := ExportBMH(want, "ns")
		docs := []any{b}
		for _, d := range ExportDayTwo(want, "ns") {
			docs = append(docs, d)
		}
		var file strings.Builder
		for _, d := range docs {
			y, err := yamlOf(d)
			if err != nil {
				t.Fatal(err)
			}
			file.WriteString("---\n" + y)
		}
		in := convert(t, file.String(), BMHOptions{})
		if len(in.Refused) > 0 || len(in.Hosts) != 1 {
			t.Fatalf("refused %q:\n%s", in.Refused, file.String())
		}
		got := in.Hosts[0].Host
		got.Labels = nil
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Errorf("round trip:\n got %s\nwant %s\n%s", gj, wj, file.String())
		}
	}
}

func yamlOf(v any) (string, error) {
	y, err := yaml.Marshal(v)
	return string(y), err
}
