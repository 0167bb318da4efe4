package importer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// metal3's day-two shapes (baremetal-operator apis/metal3.io/v1alpha1):
// BareMetalHost spec.firmware (FirmwareConfig) and spec.raid (RAIDConfig),
// and the documents named after their host: HostFirmwareSettings
// (spec.settings), HostFirmwareComponents (spec.updates), HostUpdatePolicy
// (spec.firmwareSettings, spec.firmwareUpdates). FirmwareSchema documents
// are read and ignored: they are what the BMC's BIOS registry gives.

// Kinds of the metal3 documents host apply maps onto a BareMetalHost.
const (
	KindHostFirmwareSettings   = "HostFirmwareSettings"
	KindHostFirmwareComponents = "HostFirmwareComponents"
	KindHostUpdatePolicy       = "HostUpdatePolicy"
	KindFirmwareSchema         = "FirmwareSchema"
	apiMetal3                  = "metal3.io/v1alpha1"
)

// Annotations host export writes for what metal3's shapes cannot hold,
// and host apply reads back.
const (
	// AnnFirmware (on a HostFirmwareComponents) holds, per component, the
	// checksum, version and timeout metal3's FirmwareUpdate has no field
	// for: {"bmc": {"checksum": "sha256:…", "version": "7.10", "timeout": "90m"}}.
	AnnFirmware = "rackfence.io/firmware"
	// AnnRAIDKeepExisting (on a BareMetalHost, "true") keeps the
	// controllers' volumes and adds spec.raid's (metal3 always deletes
	// them first).
	AnnRAIDKeepExisting = "rackfence.io/raid-keep-existing"
)

// bmhFirmware is metal3's FirmwareConfig: three BIOS switches.
type bmhFirmware struct {
	VirtualizationEnabled             *bool `json:"virtualizationEnabled,omitempty"`
	SimultaneousMultithreadingEnabled *bool `json:"simultaneousMultithreadingEnabled,omitempty"`
	SriovEnabled                      *bool `json:"sriovEnabled,omitempty"`
}

// bmhRAID is metal3's RAIDConfig. A list given empty ([]) deletes the
// controllers' volumes; an absent one leaves them.
type bmhRAID struct {
	HardwareRAIDVolumes *[]bmhHardwareRAIDVolume `json:"hardwareRAIDVolumes,omitempty"`
	SoftwareRAIDVolumes *[]bmhSoftwareRAIDVolume `json:"softwareRAIDVolumes,omitempty"`
}

type bmhHardwareRAIDVolume struct {
	SizeGibibytes         *int     `json:"sizeGibibytes,omitempty"`
	Level                 string   `json:"level"`
	Name                  string   `json:"name,omitempty"`
	Rotational            *bool    `json:"rotational,omitempty"`
	NumberOfPhysicalDisks *int     `json:"numberOfPhysicalDisks,omitempty"`
	Controller            string   `json:"controller,omitempty"`
	PhysicalDisks         []string `json:"physicalDisks,omitempty"`
}

type bmhSoftwareRAIDVolume struct {
	RootVolume    bool                 `json:"rootVolume,omitempty"`
	SizeGibibytes *int                 `json:"sizeGibibytes,omitempty"`
	Level         string               `json:"level"`
	PhysicalDisks []bmhRootDeviceHints `json:"physicalDisks,omitempty"`
}

// hfsSpec is HostFirmwareSettings' spec: settings by registry name, each
// a string or an integer (Kubernetes IntOrString).
type hfsSpec struct {
	Settings map[string]json.RawMessage `json:"settings"`
}

// hfcSpec is HostFirmwareComponents' spec.
type hfcSpec struct {
	Updates []hfcUpdate `json:"updates"`
}

type hfcUpdate struct {
	Component string `json:"component"`
	URL       string `json:"url"`
}

// hupSpec is HostUpdatePolicy's spec.
type hupSpec struct {
	FirmwareSettings string `json:"firmwareSettings,omitempty"`
	FirmwareUpdates  string `json:"firmwareUpdates,omitempty"`
}

// firmwareExtra is one component's entry of AnnFirmware.
type firmwareExtra struct {
	Checksum string        `json:"checksum,omitempty"`
	Version  string        `json:"version,omitempty"`
	Timeout  wire.Duration `json:"timeout,omitempty"`
}

// dayTwoDoc is one HostFirmwareSettings, HostFirmwareComponents or
// HostUpdatePolicy document, decoded.
type dayTwoDoc struct {
	where string // document N (and item)
	kind  string
	meta  k8sMeta
	hfs   *hfsSpec
	hfc   *hfcSpec
	hup   *hupSpec
	used  bool
}

// name is how errors and notes name the document: "HostFirmwareSettings
// ns/name (document 3)".
func (d *dayTwoDoc) name() string {
	return d.kind + " " + qualified(d.meta) + " (" + d.where + ")"
}

// dayTwoDocs are the documents of one host (same namespace and name).
type dayTwoDocs struct {
	hfs, hfc, hup *dayTwoDoc
}

// decodeDayTwo decodes one HostFirmwareSettings, HostFirmwareComponents
// or HostUpdatePolicy strictly: a field metal3's API does not have is
// named with its path.
func decodeDayTwo(kind string, raw []byte, where string) (*dayTwoDoc, error) {
	var outer struct {
		Metadata k8sMeta         `json:"metadata"`
		Spec     json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(raw, &outer); err != nil {
		return nil, fmt.Errorf("%s: %v", kind, strings.TrimPrefix(err.Error(), "json: "))
	}
	d := &dayTwoDoc{where: where, kind: kind, meta: outer.Metadata}
	if d.meta.Name == "" {
		return nil, fmt.Errorf("%s: field metadata.name is required: it names the BareMetalHost (same name and namespace) the document belongs to", kind)
	}
	var target any
	switch kind {
	case KindHostFirmwareSettings:
		d.hfs = &hfsSpec{}
		target = d.hfs
	case KindHostFirmwareComponents:
		d.hfc = &hfcSpec{}
		target = d.hfc
	default:
		d.hup = &hupSpec{}
		target = d.hup
	}
	spec := outer.Spec
	if len(spec) == 0 || string(spec) == "null" {
		spec = []byte("{}")
	}
	what := kind + " " + qualified(d.meta)
	if f := unknownField(spec, reflect.TypeOf(target).Elem(), "spec"); f != "" {
		return nil, fmt.Errorf("%s: field %s is not in metal3's %s API (metal3.io/v1alpha1; kubectl apply refuses it too)%s", what, f, kind, fieldHint(kind, f))
	}
	if err := json.Unmarshal(spec, target); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		if kind == KindHostFirmwareSettings && strings.Contains(msg, "into Go struct field hfsSpec.settings") {
			msg = "field spec.settings must be a map of setting name to value (ProcTurboMode: Enabled), not a list"
		}
		return nil, fmt.Errorf("%s: %s", what, msg)
	}
	if d.hup != nil {
		for _, f := range []struct {
			name string
			v    *string
		}{{"firmwareSettings", &d.hup.FirmwareSettings}, {"firmwareUpdates", &d.hup.FirmwareUpdates}} {
			switch *f.v {
			case "", "onPreparing":
				*f.v = "" // metal3's default: only before provisioning
			case wire.UpdatePolicyOnReboot:
			default:
				return nil, fmt.Errorf("%s: field spec.%s %q is not one of metal3's onPreparing, onReboot", what, f.name, *f.v)
			}
		}
	}
	return d, nil
}

// fieldHint says what a misspelt field of metal3's own samples means.
func fieldHint(kind, field string) string {
	if kind == KindHostFirmwareComponents && strings.HasPrefix(field, "spec.updates[") && strings.HasSuffix(field, "].name") {
		return ": metal3 names the component in \"component\" (bmc or bios)"
	}
	return ": misspelt? remove it"
}

// settingValue reads one HostFirmwareSettings value: a string, an integer
// or (as metal3's guide writes QuietBoot: true) a boolean.
func settingValue(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return strconv.FormatBool(b), true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if i, err := n.Int64(); err == nil {
			return strconv.FormatInt(i, 10), true
		}
	}
	return "", false
}

// mapDayTwo maps spec.firmware, spec.raid and the host's
// HostFirmwareSettings, HostFirmwareComponents and HostUpdatePolicy onto
// h. It returns refusals and notes.
func mapDayTwo(d bmhDoc, x *dayTwoDocs, h *wire.Host) (errs, notes []string) {
	s := d.Spec
	if f := s.Firmware; f != nil && (f.VirtualizationEnabled != nil || f.SimultaneousMultithreadingEnabled != nil || f.SriovEnabled != nil) {
		h.BIOS = &wire.BIOSSpec{VirtualizationEnabled: f.VirtualizationEnabled,
			SimultaneousMultithreadingEnabled: f.SimultaneousMultithreadingEnabled, SRIOVEnabled: f.SriovEnabled}
	}
	if r := s.RAID; r != nil && (r.HardwareRAIDVolumes != nil || r.SoftwareRAIDVolumes != nil) {
		rs, e := mapRAID(r)
		errs = append(errs, e...)
		switch v := d.Metadata.Annotations[AnnRAIDKeepExisting]; v {
		case "", "false":
		case "true":
			rs.KeepExisting = true
		default:
			errs = append(errs, fmt.Sprintf("annotation %s: value %q is not \"true\" or \"false\"", AnnRAIDKeepExisting, v))
		}
		h.RAID = rs
	} else if r != nil {
		notes = append(notes, "spec.raid names no volumes: the controllers' volumes are left as they are (hardwareRAIDVolumes: [] deletes them)")
	}
	if x == nil {
		return errs, notes
	}
	if doc := x.hfs; doc != nil {
		doc.used = true
		keys := make([]string, 0, len(doc.hfs.Settings))
		for k := range doc.hfs.Settings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, ok := settingValue(doc.hfs.Settings[k])
			if !ok {
				errs = append(errs, fmt.Sprintf("field spec.settings.%s of %s is %s: a setting is a string or an integer, as the BIOS registry spells it", k, doc.name(), doc.hfs.Settings[k]))
				continue
			}
			if h.BIOS == nil {
				h.BIOS = &wire.BIOSSpec{}
			}
			if h.BIOS.Settings == nil {
				h.BIOS.Settings = map[string]string{}
			}
			h.BIOS.Settings[k] = v
		}
	}
	if doc := x.hfc; doc != nil {
		doc.used = true
		e, n := mapFirmware(doc, h)
		errs, notes = append(errs, e...), append(notes, n...)
	}
	if doc := x.hup; doc != nil {
		doc.used = true
		h.UpdatePolicy = &wire.UpdatePolicy{FirmwareSettings: doc.hup.FirmwareSettings, FirmwareUpdates: doc.hup.FirmwareUpdates}
	}
	return errs, notes
}

func mapRAID(r *bmhRAID) (*wire.RAIDSpec, []string) {
	rs := &wire.RAIDSpec{}
	var errs []string
	if r.HardwareRAIDVolumes != nil {
		for _, v := range *r.HardwareRAIDVolumes {
			rs.HardwareRAIDVolumes = append(rs.HardwareRAIDVolumes, wire.HardwareRAIDVolume{Name: v.Name, Level: v.Level,
				SizeGibibytes: v.SizeGibibytes, Rotational: v.Rotational, NumberOfPhysicalDisks: v.NumberOfPhysicalDisks,
				Controller: v.Controller, PhysicalDisks: v.PhysicalDisks})
		}
	}
	if r.SoftwareRAIDVolumes != nil {
		for i, v := range *r.SoftwareRAIDVolumes {
			if v.RootVolume && i > 0 {
				errs = append(errs, fmt.Sprintf("field spec.raid.softwareRAIDVolumes[%d].rootVolume: rackfence installs on the first software RAID volume; make this volume the first one", i))
			}
			sv := wire.SoftwareRAIDVolume{Level: v.Level, SizeGibibytes: v.SizeGibibytes}
			for _, p := range v.PhysicalDisks {
				sv.PhysicalDisks = append(sv.PhysicalDisks, wire.RootDeviceHints{DeviceName: p.DeviceName, HCTL: p.HCTL, Model: p.Model,
					Vendor: p.Vendor, SerialNumber: p.SerialNumber, MinSizeGigabytes: p.MinSizeGigabytes, WWN: p.WWN,
					WWNWithExtension: p.WWNWithExtension, WWNVendorExtension: p.WWNVendorExtension, Rotational: p.Rotational})
			}
			rs.SoftwareRAIDVolumes = append(rs.SoftwareRAIDVolumes, sv)
		}
	}
	return rs, errs
}

// mapFirmware maps a HostFirmwareComponents' updates (and AnnFirmware)
// onto h.Firmware.
func mapFirmware(doc *dayTwoDoc, h *wire.Host) (errs, notes []string) {
	extra := map[string]firmwareExtra{}
	if a, ok := doc.meta.Annotations[AnnFirmware]; ok {
		if err := json.Unmarshal([]byte(a), &extra); err != nil {
			return []string{fmt.Sprintf("annotation %s of %s is not {\"COMPONENT\": {\"checksum\", \"version\", \"timeout\"}} (%v): fix or remove it",
				AnnFirmware, doc.name(), strings.TrimPrefix(err.Error(), "json: "))}, nil
		}
	}
	named := map[string]bool{}
	var bare []string
	for _, u := range doc.hfc.Updates {
		named[u.Component] = true
		e := extra[u.Component]
		h.Firmware = append(h.Firmware, wire.FirmwareComponent{Component: u.Component, URL: u.URL,
			Checksum: e.Checksum, Version: e.Version, Timeout: e.Timeout})
		if e.Checksum == "" && e.Version == "" {
			bare = append(bare, u.Component)
		}
	}
	if len(bare) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s carry no checksum and no version (metal3 has neither): the image is not verified, and the update is done when the component shows a version other than the one before",
			doc.name(), strings.Join(bare, ", ")))
	}
	var stray []string
	for c := range extra {
		if !named[c] {
			stray = append(stray, c)
		}
	}
	sort.Strings(stray)
	if len(stray) > 0 {
		notes = append(notes, fmt.Sprintf("%s: annotation %s names %s, which spec.updates does not: ignored", doc.name(), AnnFirmware, strings.Join(stray, ", ")))
	}
	return nil, notes
}

// dayTwoField names a day-two field of the host (as wire's validation
// names it) as the operator wrote it: in which document, under which
// path. ok is false for fields of the BareMetalHost's own spec.
func dayTwoField(f string, x *dayTwoDocs) (string, bool) {
	switch {
	case strings.HasPrefix(f, "bios.settings"):
		if x != nil && x.hfs != nil {
			return "field spec" + strings.TrimPrefix(f, "bios") + " of " + x.hfs.name(), true
		}
	case strings.HasPrefix(f, "bios."):
		return "field spec.firmware." + strings.TrimPrefix(f, "bios."), true
	case f == "firmware" || strings.HasPrefix(f, "firmware["):
		if x == nil || x.hfc == nil {
			break
		}
		rest := strings.TrimPrefix(f, "firmware")
		for _, k := range []string{"checksum", "version", "timeout"} {
			if strings.HasSuffix(rest, "."+k) {
				return fmt.Sprintf("annotation %s of %s: %s of update %s", AnnFirmware, x.hfc.name(), k, strings.TrimSuffix(rest, "."+k)), true
			}
		}
		return "field spec.updates" + rest + " of " + x.hfc.name(), true
	case strings.HasPrefix(f, "updatePolicy."):
		if x != nil && x.hup != nil {
			return "field spec." + strings.TrimPrefix(f, "updatePolicy.") + " of " + x.hup.name(), true
		}
	}
	return "", false
}
