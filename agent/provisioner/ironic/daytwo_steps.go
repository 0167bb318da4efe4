package ironic

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Day-two spec → Ironic 21.4 manual clean steps. Every refusal here
// happens before anything changes on the node or the BMC.

// checkDayTwo refuses what Ironic 21.4's redfish interfaces cannot do,
// naming the field.
func checkDayTwo(spec provisioner.DayTwoSpec) error {
	if r := spec.RAID; r != nil && len(r.SoftwareRAIDVolumes) > 0 {
		return fmt.Errorf("%w: raid.softwareRAIDVolumes: software RAID through Ironic is built in-band by Ironic's agent ramdisk (raid interface agent, mdadm on the host's disks), which rackfence's Ironic path does not drive; use hardwareRAIDVolumes or remove them", errclass.ErrUnsupported)
	}
	if r := spec.RAID; r != nil {
		for i, v := range r.HardwareRAIDVolumes {
			if (v.SizeGibibytes == nil || *v.SizeGibibytes == 0) && len(v.PhysicalDisks) == 0 {
				return fmt.Errorf("%w: raid.hardwareRAIDVolumes[%d]: Ironic's redfish RAID interface refuses a volume of the disks' whole size (size_gb MAX) without physicalDisks: set sizeGibibytes or physicalDisks", errclass.ErrFailed, i)
			}
		}
	}
	for i, c := range spec.Firmware {
		if c.Checksum == "" {
			return fmt.Errorf("%w: firmware[%d].checksum is empty: Ironic 21.4's update_firmware step requires a checksum for every image; set it", errclass.ErrFailed, i)
		}
	}
	return nil
}

// biosSettings is the BIOS settings the spec asks for (the named switches
// mapped to vendor attributes through named), minus those Ironic's cached
// settings already show at their value, sorted by name.
func biosSettings(b *wire.BIOSSpec, vendor string, current map[string]string,
	named func(vendor string, on map[string]bool) (map[string]string, error)) ([]map[string]any, error) {
	if b == nil {
		return nil, nil
	}
	want := map[string]string{}
	sw := map[string]bool{}
	for k, v := range map[string]*bool{"simultaneousMultithreadingEnabled": b.SimultaneousMultithreadingEnabled,
		"sriovEnabled": b.SRIOVEnabled, "virtualizationEnabled": b.VirtualizationEnabled} {
		if v != nil {
			sw[k] = *v
		}
	}
	if len(sw) > 0 {
		if named == nil {
			return nil, fmt.Errorf("%w: bios: the named settings (simultaneousMultithreadingEnabled, sriovEnabled, virtualizationEnabled) need the vendor's attribute names, which this agent was built without: give bios.settings by attribute name", errclass.ErrUnsupported)
		}
		m, err := named(vendor, sw)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			want[k] = v
		}
	}
	for k, v := range b.Settings {
		want[k] = v
	}
	names := make([]string, 0, len(want))
	for k := range want {
		if _, known := current[k]; len(current) > 0 && !known {
			return nil, fmt.Errorf("%w: bios.settings: the BMC has no BIOS attribute %q (Ironic's cached settings list %d attributes; GET /v1/nodes/NODE/bios)", errclass.ErrFailed, k, len(current))
		}
		if cur, ok := current[k]; ok && cur == want[k] {
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]map[string]any, 0, len(names))
	for _, k := range names {
		out = append(out, map[string]any{"name": k, "value": want[k]})
	}
	return out, nil
}

// logicalDisks is target_raid_config for the spec's hardware volumes (the
// first one is the root volume, as metal3 does).
func logicalDisks(r *wire.RAIDSpec) []nodes.LogicalDisk {
	if r == nil {
		return nil
	}
	out := make([]nodes.LogicalDisk, 0, len(r.HardwareRAIDVolumes))
	for i, v := range r.HardwareRAIDVolumes {
		d := nodes.LogicalDisk{RAIDLevel: nodes.RAIDLevel(v.Level), VolumeName: v.Name, Controller: v.Controller}
		if v.SizeGibibytes != nil && *v.SizeGibibytes > 0 {
			s := *v.SizeGibibytes
			d.SizeGB = &s
		}
		if i == 0 {
			root := true
			d.IsRootVolume = &root
		}
		if v.Rotational != nil {
			d.DiskType = nodes.SSD
			if *v.Rotational {
				d.DiskType = nodes.HDD
			}
		}
		if v.NumberOfPhysicalDisks != nil {
			d.NumberOfPhysicalDisks = *v.NumberOfPhysicalDisks
		}
		for _, p := range v.PhysicalDisks {
			d.PhysicalDisks = append(d.PhysicalDisks, p)
		}
		out = append(out, d)
	}
	return out
}

// firmwareImages is update_firmware's firmware_images. source "http"
// makes Ironic hand each URL to the BMC's SimpleUpdate as it is (no
// download, no staging); Ironic then checks no checksum (it verifies a
// SHA-1 only when it stages the file), so the spec's digest is passed
// for the field Ironic requires. Ironic 21.4 sends no Targets: the BMC
// picks the component from the image.
func firmwareImages(fw []wire.FirmwareComponent) []map[string]any {
	out := make([]map[string]any, 0, len(fw))
	for _, c := range fw {
		sum := c.Checksum
		if i := strings.IndexByte(sum, ':'); i >= 0 {
			sum = sum[i+1:]
		}
		out = append(out, map[string]any{"url": c.URL, "checksum": sum, "source": "http"})
	}
	return out
}

// cleanSteps orders the steps: firmware first (new BIOS firmware may
// bring the attributes the settings name), then BIOS settings, then RAID
// (delete the old volumes unless keepExisting, create the new ones).
func cleanSteps(images []map[string]any, bios []map[string]any, raid *wire.RAIDSpec) []nodes.CleanStep {
	var steps []nodes.CleanStep
	if len(images) > 0 {
		steps = append(steps, nodes.CleanStep{Interface: nodes.InterfaceManagement, Step: "update_firmware",
			Args: map[string]any{"firmware_images": images}})
	}
	if len(bios) > 0 {
		steps = append(steps, nodes.CleanStep{Interface: nodes.InterfaceBIOS, Step: "apply_configuration",
			Args: map[string]any{"settings": bios}})
	}
	if raid != nil && len(raid.HardwareRAIDVolumes) > 0 {
		if !raid.KeepExisting {
			steps = append(steps, nodes.CleanStep{Interface: nodes.InterfaceRAID, Step: "delete_configuration"})
		}
		steps = append(steps, nodes.CleanStep{Interface: nodes.InterfaceRAID, Step: "create_configuration"})
	}
	return steps
}

// dayTwoFingerprint identifies a spec: what node.extra records as
// started or done.
func dayTwoFingerprint(spec provisioner.DayTwoSpec) string {
	b, _ := json.Marshal(struct {
		B *wire.BIOSSpec
		R *wire.RAIDSpec
		F []wire.FirmwareComponent
	}{spec.BIOS, spec.RAID, spec.Firmware})
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// stepNames lists steps as interface.step for messages.
func stepNames(steps []nodes.CleanStep) string {
	s := make([]string, len(steps))
	for i, st := range steps {
		s[i] = string(st.Interface) + "." + st.Step
	}
	return strings.Join(s, ", ")
}
