package ctl

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/rackfence/rackfence/shared/wire"
)

const specYAML = `name: h1
rack: r1
image:
  url: http://images.example/disk.qcow2
  checksum: 0123456789abcdef0123456789abcdef
  checksumType: md5
  format: qcow2
bootMode: UEFISecureBoot
automatedCleaningMode: disabled
rootDeviceHints:
  deviceName: /dev/sda
  hctl: "0:0:0:0"
  model: PERC
  vendor: DELL
  serialNumber: S1
  minSizeGigabytes: 100
  wwn: "0x5000"
  wwnWithExtension: "0x5000abc"
  wwnVendorExtension: "0xabc"
  rotational: false
`

// host apply -f with the metal3 spec fields: parsed without warnings, shown
// by host get, and the YAML that -o yaml prints applies back unchanged.
func TestSpecFieldsRoundTrip(t *testing.T) {
	var warnings []string
	hs, err := parseHosts([]byte(specYAML), func(s string) { warnings = append(warnings, s) })
	if err != nil || len(hs) != 1 || len(warnings) != 0 {
		t.Fatalf("parse: %v %d hosts, warnings %q", err, len(hs), warnings)
	}
	h := hs[0]
	no := false
	want := wire.RootDeviceHints{DeviceName: "/dev/sda", HCTL: "0:0:0:0", Model: "PERC", Vendor: "DELL", SerialNumber: "S1",
		MinSizeGigabytes: 100, WWN: "0x5000", WWNWithExtension: "0x5000abc", WWNVendorExtension: "0xabc", Rotational: &no}
	if h.RootDeviceHints == nil || !reflect.DeepEqual(*h.RootDeviceHints, want) || h.BootMode != "UEFISecureBoot" ||
		h.AutomatedCleaningMode != "disabled" || h.Image.Format != "qcow2" || h.Image.ChecksumType != "md5" {
		t.Fatalf("parsed %+v (hints %+v)", h, h.RootDeviceHints)
	}
	out, err := yaml.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := parseHosts(out, func(s string) { t.Errorf("warning on round trip: %s", s) })
	if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0], h) {
		t.Fatalf("round trip: %v\n%s\n%+v", err, out, back)
	}

	var b strings.Builder
	hostDetail(&b, &h)
	for _, line := range []string{
		"Image:", "http://images.example/disk.qcow2 (format qcow2, md5 0123456789abcdef0123456789abcdef)",
		"Boot mode:", "UEFISecureBoot", "Automated cleaning:", "disabled",
		"Root device hints:", "deviceName=/dev/sda hctl=0:0:0:0 model=PERC vendor=DELL serialNumber=S1 minSizeGigabytes=100 wwn=0x5000 wwnWithExtension=0x5000abc wwnVendorExtension=0xabc rotational=false (Ironic only",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("host get lacks %q:\n%s", line, b.String())
		}
	}

	for _, c := range []struct{ in, err string }{
		{"name: a\nrack: r1\nimage: {url: http://x/y, format: qcow3}\n", `field image.format "qcow3" is not one of raw, qcow2, vdi, vmdk, live-iso`},
		{"name: a\nrack: r1\nbootMode: bios\n", "field bootMode"},
		{"name: a\nrack: r1\nautomatedCleaningMode: always\n", "field automatedCleaningMode"},
		{"name: a\nrack: r1\nrootDeviceHints: {hctl: x}\n", "field rootDeviceHints.hctl"},
	} {
		if _, err := parseHosts([]byte(c.in), func(string) {}); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		}
	}
}
