package ironic_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// The spec's root device hints, boot mode, automated cleaning mode and
// image format/checksum type reach a real Ironic: properties.root_device,
// properties.capabilities, automated_clean and instance_info, read back
// from the node; a spec change after registration is patched in.
func TestSpecFieldsFakeHardware(t *testing.T) {
	url := needIronic(t)
	p := newProv(t, url, fakeHW)
	ctx := ctxT(t)
	h := fakeHost("spec")
	yes := true
	h.RootDeviceHints = &wire.RootDeviceHints{DeviceName: "/dev/sdb", HCTL: "0:0:1:0", Model: "PERC H730", Vendor: "DELL",
		SerialNumber: "S1", MinSizeGigabytes: 100, WWN: "0x5000c500", WWNWithExtension: "0x5000c500abc",
		WWNVendorExtension: "0xabc", Rotational: &yes}
	h.BootMode = wire.BootModeUEFISecure
	h.AutomatedCleaningMode = wire.CleaningDisabled

	r := must(t, "register")(p.Register(ctx, h))
	h.ProvisioningID = r.ProvisioningID
	n := wantState(t, url, h.ProvisioningID, "manageable")
	wantRD := map[string]string{"name": "/dev/sdb", "hctl": "0:0:1:0", "model": "PERC H730", "vendor": "DELL", "serial": "S1",
		"size": ">= 100", "wwn": "0x5000c500", "wwn_with_extension": "0x5000c500abc", "wwn_vendor_extension": "0xabc", "rotational": "true"}
	rd, _ := n.Properties["root_device"].(map[string]any)
	if len(rd) != len(wantRD) {
		t.Fatalf("properties.root_device = %v, want %v", rd, wantRD)
	}
	for k, v := range wantRD {
		if fmt.Sprint(rd[k]) != v {
			t.Errorf("properties.root_device[%s] = %v, want %s", k, rd[k], v)
		}
	}
	if c := n.Properties["capabilities"]; c != "boot_mode:uefi,secure_boot:true" {
		t.Errorf("properties.capabilities = %v", c)
	}
	if n.AutomatedClean == nil || *n.AutomatedClean {
		t.Errorf("automated_clean = %v, want false", n.AutomatedClean)
	}

	// A spec change after registration: legacy boot, cleaning back on, no hints.
	h.BootMode, h.AutomatedCleaningMode, h.RootDeviceHints = wire.BootModeLegacy, wire.CleaningMetadata, nil
	must(t, "register again")(p.Register(ctx, h))
	n = wantState(t, url, h.ProvisioningID, "manageable")
	if _, ok := n.Properties["root_device"]; ok {
		t.Errorf("properties.root_device still %v", n.Properties["root_device"])
	}
	if c := n.Properties["capabilities"]; c != "boot_mode:bios" {
		t.Errorf("properties.capabilities = %v, want boot_mode:bios", c)
	}
	if n.AutomatedClean == nil || !*n.AutomatedClean {
		t.Errorf("automated_clean = %v, want true", n.AutomatedClean)
	}

	// Provision a qcow2 image with a bare sha512 checksum, UEFI.
	h.BootMode, h.AutomatedCleaningMode = wire.BootModeUEFI, wire.CleaningDisabled
	must(t, "provide")(p.Provide(ctx, h))
	wantState(t, url, h.ProvisioningID, "available")
	sum := strings.Repeat("cd", 64)
	h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/disk.img", Checksum: sum, ChecksumType: "sha512", Format: "qcow2"}
	must(t, "provision")(p.Provision(ctx, h))
	n = wantState(t, url, h.ProvisioningID, "active")
	ii := n.InstanceInfo
	if ii["image_source"] != h.Image.URL || ii["image_os_hash_algo"] != "sha512" || ii["image_os_hash_value"] != sum || ii["image_disk_format"] != "qcow2" {
		t.Errorf("instance_info = %v", ii)
	}
	if caps, _ := ii["capabilities"].(map[string]any); caps["boot_mode"] != "uefi" || caps["secure_boot"] != nil {
		t.Errorf("instance_info.capabilities = %v, want boot_mode uefi only", ii["capabilities"])
	}
	if c := n.Properties["capabilities"]; c != "boot_mode:uefi" {
		t.Errorf("properties.capabilities = %v, want boot_mode:uefi", c)
	}
	if n.AutomatedClean == nil || *n.AutomatedClean {
		t.Errorf("automated_clean = %v, want false", n.AutomatedClean)
	}
	must(t, "deprovision")(p.Deprovision(ctx, h))
	wantState(t, url, h.ProvisioningID, "available")

	// A checksum file's URL (metal3's usual form) is passed on as it is.
	h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/disk.img", Checksum: "http://127.0.0.1:9/images/disk.img.sha256sum", ChecksumType: "sha256"}
	must(t, "provision (checksum URL)")(p.Provision(ctx, h))
	n = wantState(t, url, h.ProvisioningID, "active")
	if ii := n.InstanceInfo; ii["image_os_hash_algo"] != "sha256" || ii["image_os_hash_value"] != h.Image.Checksum {
		t.Errorf("checksum URL: instance_info = %v", ii)
	}
	must(t, "deprovision")(p.Deprovision(ctx, h))
	wantState(t, url, h.ProvisioningID, "available")

	// An md5 checksum goes in image_checksum; a live ISO deploys with the
	// ramdisk deploy interface and boot_iso.
	h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/live.iso", Checksum: "md5:" + strings.Repeat("0", 32)}
	// fake-hardware's fake boot interface cannot boot a ramdisk: Ironic
	// refuses the deploy after instance_info and deploy_interface are set
	// (a redfish node deploying over virtual media boots it: redfish_test).
	if _, err := p.Provision(ctx, h); err != nil && !strings.Contains(err.Error(), "ramdisk_boot") {
		t.Fatalf("live-iso provision: %v", err)
	}
	n, _ = rawNode(t, url, h.ProvisioningID)
	if n.DeployInterface != "ramdisk" || n.InstanceInfo["boot_iso"] != h.Image.URL {
		t.Errorf("live-iso: deploy_interface %q, instance_info %v", n.DeployInterface, n.InstanceInfo)
	}
	must(t, "delete")(p.Delete(ctx, h))
}
