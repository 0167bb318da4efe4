package importer

import (
	"encoding/json"

	"github.com/rackfence/rackfence/shared/wire"
)

// ExportedDayTwo is a HostFirmwareSettings, HostFirmwareComponents or
// HostUpdatePolicy document as host export writes it (no status), named
// after its host.
type ExportedDayTwo struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Metadata   k8sMeta `json:"metadata"`
	Spec       any     `json:"spec"`
}

// exportedSettings is HostFirmwareSettings' spec as export writes it.
type exportedSettings struct {
	Settings map[string]string `json:"settings"`
}

// exportDayTwoSpec writes the host's BIOS switches and RAID layout into
// the BareMetalHost's spec.firmware and spec.raid (and the annotation for
// keepExisting, which metal3 cannot say).
func exportDayTwoSpec(h wire.Host, d *ExportedBMH) {
	if b := h.BIOS; b != nil && (b.VirtualizationEnabled != nil || b.SimultaneousMultithreadingEnabled != nil || b.SRIOVEnabled != nil) {
		d.Spec.Firmware = &bmhFirmware{VirtualizationEnabled: b.VirtualizationEnabled,
			SimultaneousMultithreadingEnabled: b.SimultaneousMultithreadingEnabled, SriovEnabled: b.SRIOVEnabled}
	}
	r := h.RAID
	if r == nil {
		return
	}
	out := &bmhRAID{}
	if len(r.SoftwareRAIDVolumes) > 0 {
		sw := make([]bmhSoftwareRAIDVolume, 0, len(r.SoftwareRAIDVolumes))
		for _, v := range r.SoftwareRAIDVolumes {
			sv := bmhSoftwareRAIDVolume{Level: v.Level, SizeGibibytes: v.SizeGibibytes}
			for _, p := range v.PhysicalDisks {
				sv.PhysicalDisks = append(sv.PhysicalDisks, bmhRootDeviceHints{DeviceName: p.DeviceName, HCTL: p.HCTL, Model: p.Model,
					Vendor: p.Vendor, SerialNumber: p.SerialNumber, MinSizeGigabytes: p.MinSizeGigabytes, WWN: p.WWN,
					WWNWithExtension: p.WWNWithExtension, WWNVendorExtension: p.WWNVendorExtension, Rotational: p.Rotational})
			}
			sw = append(sw, sv)
		}
		out.SoftwareRAIDVolumes = &sw
	} else {
		// An empty list is metal3's "delete the volumes": written even
		// when there are none.
		hw := make([]bmhHardwareRAIDVolume, 0, len(r.HardwareRAIDVolumes))
		for _, v := range r.HardwareRAIDVolumes {
			hw = append(hw, bmhHardwareRAIDVolume{Name: v.Name, Level: v.Level, SizeGibibytes: v.SizeGibibytes, Rotational: v.Rotational,
				NumberOfPhysicalDisks: v.NumberOfPhysicalDisks, Controller: v.Controller, PhysicalDisks: v.PhysicalDisks})
		}
		out.HardwareRAIDVolumes = &hw
	}
	d.Spec.RAID = out
	if r.KeepExisting {
		d.Metadata.Annotations[AnnRAIDKeepExisting] = "true"
	}
}

// ExportDayTwo writes the documents metal3 keeps beside a BareMetalHost:
// HostFirmwareSettings (bios.settings), HostFirmwareComponents
// (firmware[]; checksum, version and timeout in AnnFirmware) and
// HostUpdatePolicy (updatePolicy), each named after the host. None when
// the host has none of them.
func ExportDayTwo(h wire.Host, ns string) []ExportedDayTwo {
	var out []ExportedDayTwo
	doc := func(kind string, spec any) ExportedDayTwo {
		return ExportedDayTwo{APIVersion: apiMetal3, Kind: kind, Metadata: k8sMeta{Name: h.Name, Namespace: ns}, Spec: spec}
	}
	if b := h.BIOS; b != nil && len(b.Settings) > 0 {
		out = append(out, doc(KindHostFirmwareSettings, exportedSettings{Settings: b.Settings}))
	}
	if len(h.Firmware) > 0 {
		spec := hfcSpec{Updates: make([]hfcUpdate, 0, len(h.Firmware))}
		extra := map[string]firmwareExtra{}
		for _, c := range h.Firmware {
			spec.Updates = append(spec.Updates, hfcUpdate{Component: c.Component, URL: c.URL})
			if c.Checksum != "" || c.Version != "" || c.Timeout != 0 {
				extra[c.Component] = firmwareExtra{Checksum: c.Checksum, Version: c.Version, Timeout: c.Timeout}
			}
		}
		d := doc(KindHostFirmwareComponents, spec)
		if len(extra) > 0 {
			js, _ := json.Marshal(extra)
			d.Metadata.Annotations = map[string]string{AnnFirmware: string(js)}
		}
		out = append(out, d)
	}
	if p := h.UpdatePolicy; p != nil {
		out = append(out, doc(KindHostUpdatePolicy, hupSpec{FirmwareSettings: p.FirmwareSettings, FirmwareUpdates: p.FirmwareUpdates}))
	}
	return out
}
