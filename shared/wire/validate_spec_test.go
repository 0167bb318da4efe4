package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateHostSpecFields(t *testing.T) {
	no := false
	sha256 := strings.Repeat("a", 64)
	cases := []struct {
		name  string
		mod   func(h *Host)
		field string // "" = valid
		msg   string // part of the message
	}{
		{"plain", func(h *Host) {}, "", ""},
		{"legacy prefix checksum", func(h *Host) { h.Image.Checksum = "sha256:ab" }, "", ""},
		{"bare sha256 auto", func(h *Host) { h.Image.Checksum = sha256 }, "", ""},
		{"bare with type", func(h *Host) { h.Image.Checksum, h.Image.ChecksumType = "abcd", "md5" }, "", ""},
		{"prefix with same type", func(h *Host) { h.Image.Checksum, h.Image.ChecksumType = "md5:ab", "md5" }, "", ""},
		{"checksum file URL", func(h *Host) { h.Image.Checksum = "http://i/x.img.sha256sum" }, "", ""},
		{"checksum file URL with type", func(h *Host) { h.Image.Checksum, h.Image.ChecksumType = "https://i/CHECKSUM", "sha512" }, "", ""},
		{"checksum URL without host", func(h *Host) { h.Image.Checksum = "http:///x.sha256sum" }, "image.checksum", "not a URL of a checksum file"},
		{"all formats", func(h *Host) { h.Image.Format = "live-iso" }, "", ""},
		{"every field", func(h *Host) {
			h.Image.Format, h.Image.ChecksumType, h.Image.Checksum = "qcow2", "sha512", strings.Repeat("0", 128)
			h.BootMode, h.AutomatedCleaningMode = BootModeUEFISecure, CleaningDisabled
			h.RootDeviceHints = &RootDeviceHints{DeviceName: "/dev/disk/by-path/pci-0000:00:1f.2-ata-1", HCTL: "0:0:0:0",
				Model: "m", Vendor: "v", SerialNumber: "s", MinSizeGigabytes: 100, WWN: "0x5000", Rotational: &no}
		}, "", ""},
		{"format", func(h *Host) { h.Image.Format = "qcow3" }, "image.format", `"qcow3" is not one of raw, qcow2, vdi, vmdk, live-iso`},
		{"checksum type", func(h *Host) { h.Image.ChecksumType = "crc" }, "image.checksumType", `"crc" is not one of md5, sha256, sha512, auto`},
		{"type vs prefix", func(h *Host) { h.Image.Checksum, h.Image.ChecksumType = "md5:ab", "sha256" }, "image.checksumType", "does not match"},
		{"bad prefix", func(h *Host) { h.Image.Checksum = "crc:ab" }, "image.checksum", "must be HEX"},
		{"not hex", func(h *Host) { h.Image.Checksum = "zz" }, "image.checksum", "must be HEX"},
		{"auto unknown length", func(h *Host) { h.Image.Checksum = "abcd" }, "image.checksum", "set image.checksumType"},
		{"boot mode", func(h *Host) { h.BootMode = "bios" }, "bootMode", `"bios" is not one of UEFI, UEFISecureBoot, legacy`},
		{"boot method", func(h *Host) { h.BootMethod = "ipxe" }, "bootMethod", `"ipxe" is not one of vmedia, pxe, uefihttp`},
		{"boot method uefihttp", func(h *Host) { h.BootMethod = BootMethodUEFIHTTP }, "", ""},
		{"cleaning", func(h *Host) { h.AutomatedCleaningMode = "on" }, "automatedCleaningMode", `"on" is not one of metadata, disabled`},
		{"device name", func(h *Host) { h.RootDeviceHints = &RootDeviceHints{DeviceName: "sda"} }, "rootDeviceHints.deviceName", "/dev/"},
		{"hctl", func(h *Host) { h.RootDeviceHints = &RootDeviceHints{HCTL: "0:a:0:0"} }, "rootDeviceHints.hctl", "Host:Channel:Target:Lun"},
		{"size", func(h *Host) { h.RootDeviceHints = &RootDeviceHints{MinSizeGigabytes: -2} }, "rootDeviceHints.minSizeGigabytes", "negative"},
		{"long", func(h *Host) { h.RootDeviceHints = &RootDeviceHints{Model: strings.Repeat("m", 300)} }, "rootDeviceHints.model", "at most 256"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &Host{Name: "h1", Rack: "r1", Image: &Image{URL: "http://i/x.img"}}
			c.mod(h)
			err := ValidateHost(h, "h1")
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.msg) {
				t.Fatalf("got %v, want field %s with %q", err, c.field, c.msg)
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Fatalf("%v does not name %s", err, c.field)
			}
		})
	}
}

func TestImageHelpers(t *testing.T) {
	for _, c := range []struct {
		im         Image
		format     string
		algo, hex_ string
	}{
		{Image{URL: "http://i/a.iso"}, FormatLiveISO, "", ""},
		{Image{URL: "http://i/a.ISO?x=1"}, FormatLiveISO, "", ""},
		{Image{URL: "http://i/a.qcow2", Checksum: "md5:ab"}, "", "md5", "ab"},
		{Image{URL: "http://i/a.iso", Format: "raw", Checksum: strings.Repeat("f", 128)}, "raw", "sha512", strings.Repeat("f", 128)},
		{Image{URL: "http://i/a", Checksum: "ab", ChecksumType: "sha256"}, "", "sha256", "ab"},
		// A checksum file's URL has no digest until the file is read.
		{Image{URL: "http://i/a", Checksum: "HTTPS://i/a.sha256sum", ChecksumType: "sha256"}, "", "", ""},
	} {
		if f := c.im.EffectiveFormat(); f != c.format {
			t.Errorf("%+v: format %q, want %q", c.im, f, c.format)
		}
		if a, h := c.im.ChecksumAlgo(); a != c.algo || h != c.hex_ {
			t.Errorf("%+v: checksum %q %q, want %q %q", c.im, a, h, c.algo, c.hex_)
		}
		if u := c.im.ChecksumURL(); (u != "") != strings.Contains(c.im.Checksum, "://") {
			t.Errorf("%+v: checksum URL %q", c.im, u)
		}
	}
}
