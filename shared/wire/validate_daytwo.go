package wire

import (
	"fmt"
	"net/url"
	"strings"
)

// Bounds of the day-two spec.
const (
	MaxBIOSSettings       = 512
	MaxFirmwareComponents = 32
	MaxRAIDVolumes        = 32
	maxDayTwoString       = 256
)

// validateDayTwo checks the day-two spec (daytwo.go); errors name the
// field's path (firmware[1].url, raid.hardwareRAIDVolumes[0].level).
func validateDayTwo(h *Host) error {
	if h.BIOS != nil {
		if err := validateBIOS(h.BIOS); err != nil {
			return err
		}
	}
	if len(h.Firmware) > MaxFirmwareComponents {
		return fieldErr("firmware", "has %d components; at most %d are allowed", len(h.Firmware), MaxFirmwareComponents)
	}
	seen := make(map[string]int, len(h.Firmware))
	for i := range h.Firmware {
		if err := validateFirmware(&h.Firmware[i], fmt.Sprintf("firmware[%d]", i)); err != nil {
			return err
		}
		if j, dup := seen[h.Firmware[i].Component]; dup {
			return fieldErr(fmt.Sprintf("firmware[%d].component", i), "%q is also firmware[%d]: update each component once", h.Firmware[i].Component, j)
		}
		seen[h.Firmware[i].Component] = i
	}
	if h.RAID != nil {
		if err := validateRAID(h.RAID); err != nil {
			return err
		}
	}
	if p := h.UpdatePolicy; p != nil {
		for _, f := range []struct{ name, v string }{{"firmwareSettings", p.FirmwareSettings}, {"firmwareUpdates", p.FirmwareUpdates}} {
			if f.v != "" && f.v != UpdatePolicyOnReboot {
				return fieldErr("updatePolicy."+f.name, "%q is not a policy: use %s, or leave it empty (changes apply only before provisioning)", f.v, UpdatePolicyOnReboot)
			}
		}
	}
	return nil
}

func validateBIOS(b *BIOSSpec) error {
	if len(b.Settings) > MaxBIOSSettings {
		return fieldErr("bios.settings", "has %d attributes; at most %d are allowed", len(b.Settings), MaxBIOSSettings)
	}
	for k, v := range b.Settings {
		if !isAttributeName(k) {
			return fieldErr("bios.settings", "%q is not a BIOS attribute name: use the registry's name (letters, digits and '_', starting with a letter, at most 128 characters)", k)
		}
		if err := checkLen("bios.settings."+k, v, maxDayTwoString); err != nil {
			return err
		}
	}
	return nil
}

// isAttributeName reports whether s can name a Redfish BIOS attribute
// (AttributeRegistry AttributeName: ^[A-Za-z][A-Za-z0-9_]+$).
func isAttributeName(s string) bool {
	if len(s) < 1 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

func validateFirmware(f *FirmwareComponent, at string) error {
	switch c := f.Component; {
	case c == "":
		return fieldErr(at+".component", "is required: bmc, bios, nic:ID or a firmware inventory id")
	case len(c) > maxDayTwoString:
		return fieldErr(at+".component", "is %d characters long; at most %d are allowed", len(c), maxDayTwoString)
	case strings.ContainsAny(c, " \t\r\n/"):
		return fieldErr(at+".component", "%q must not contain spaces or '/': use bmc, bios, nic:ID or a firmware inventory id", c)
	case c == ComponentNICPrefix || (strings.HasPrefix(c, ComponentNICPrefix) && strings.ContainsRune(c[len(ComponentNICPrefix):], ':')):
		return fieldErr(at+".component", "%q must name one NIC: nic:ID, the id of the NIC's firmware inventory entry", c)
	}
	if f.URL == "" {
		return fieldErr(at+".url", "is required: where the BMC fetches the image")
	}
	u, err := url.Parse(f.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fieldErr(at+".url", "must be http(s): %q is not an absolute http:// or https:// URL", f.URL)
	}
	if err := checkLen(at+".url", f.URL, 2048); err != nil {
		return err
	}
	if c := f.Checksum; c != "" {
		algo, sum, _ := strings.Cut(c, ":")
		want := map[string]int{ChecksumSHA256: 64, ChecksumSHA512: 128}[algo]
		if want == 0 || len(sum) != want || !isHex(sum) {
			return fieldErr(at+".checksum", "%q must be sha256:HEX (64 hex digits) or sha512:HEX (128)", c)
		}
	}
	if err := checkLen(at+".version", f.Version, maxDayTwoString); err != nil {
		return err
	}
	if d := f.Timeout.D(); d != 0 && (d < FirmwareTimeoutMin || d > FirmwareTimeoutMax) {
		return fieldErr(at+".timeout", "%s is outside %s to %s (leave it empty for %s)", d, FirmwareTimeoutMin, FirmwareTimeoutMax, FirmwareTimeoutDefault)
	}
	return nil
}

func validateRAID(r *RAIDSpec) error {
	if len(r.HardwareRAIDVolumes) > 0 && len(r.SoftwareRAIDVolumes) > 0 {
		return fieldErr("raid.softwareRAIDVolumes", "cannot be set with raid.hardwareRAIDVolumes: choose hardware or software RAID")
	}
	if len(r.HardwareRAIDVolumes) > MaxRAIDVolumes {
		return fieldErr("raid.hardwareRAIDVolumes", "has %d volumes; at most %d are allowed", len(r.HardwareRAIDVolumes), MaxRAIDVolumes)
	}
	if len(r.SoftwareRAIDVolumes) > 8 {
		return fieldErr("raid.softwareRAIDVolumes", "has %d volumes; at most 8 are allowed", len(r.SoftwareRAIDVolumes))
	}
	names := map[string]int{}
	for i := range r.HardwareRAIDVolumes {
		v := &r.HardwareRAIDVolumes[i]
		at := fmt.Sprintf("raid.hardwareRAIDVolumes[%d]", i)
		if err := checkOneOf(at+".level", v.Level, RAIDLevels); err != nil {
			return err
		}
		if v.Name != "" {
			if err := checkLen(at+".name", v.Name, 64); err != nil {
				return err
			}
			if j, dup := names[v.Name]; dup {
				return fieldErr(at+".name", "%q is also raid.hardwareRAIDVolumes[%d]: name each volume once", v.Name, j)
			}
			names[v.Name] = i
		}
		if err := validateSize(at, v.SizeGibibytes); err != nil {
			return err
		}
		if n := v.NumberOfPhysicalDisks; n != nil && (*n < 1 || *n > 256) {
			return fieldErr(at+".numberOfPhysicalDisks", "%d is outside 1 to 256", *n)
		}
		if n := v.NumberOfPhysicalDisks; n != nil && len(v.PhysicalDisks) > 0 && *n != len(v.PhysicalDisks) {
			return fieldErr(at+".numberOfPhysicalDisks", "is %d but physicalDisks names %d: give one, or make them agree", *n, len(v.PhysicalDisks))
		}
		if err := checkLen(at+".controller", v.Controller, maxDayTwoString); err != nil {
			return err
		}
		if len(v.PhysicalDisks) > 0 && v.Controller == "" {
			return fieldErr(at+".controller", "is required when physicalDisks are named (disk names are the controller's)")
		}
		for j, d := range v.PhysicalDisks {
			if d == "" || len(d) > maxDayTwoString {
				return fieldErr(fmt.Sprintf("%s.physicalDisks[%d]", at, j), "must be a disk name of 1 to %d characters", maxDayTwoString)
			}
		}
	}
	for i := range r.SoftwareRAIDVolumes {
		v := &r.SoftwareRAIDVolumes[i]
		at := fmt.Sprintf("raid.softwareRAIDVolumes[%d]", i)
		if err := checkOneOf(at+".level", v.Level, SoftwareRAIDLevels); err != nil {
			return err
		}
		if i == 0 && v.Level != "1" {
			return fieldErr(at+".level", "%q: the first software RAID volume holds the root file system and must be level 1", v.Level)
		}
		if err := validateSize(at, v.SizeGibibytes); err != nil {
			return err
		}
		if n := len(v.PhysicalDisks); n == 1 {
			return fieldErr(at+".physicalDisks", "names 1 disk; a software RAID volume needs at least 2 (or none: the agent picks)")
		}
		for j := range v.PhysicalDisks {
			if err := validateRootDeviceHints(&v.PhysicalDisks[j]); err != nil {
				if f, ok := err.(*FieldError); ok {
					f.Field = fmt.Sprintf("%s.physicalDisks[%d]%s", at, j, strings.TrimPrefix(f.Field, "rootDeviceHints"))
				}
				return err
			}
		}
	}
	return nil
}

func validateSize(at string, n *int) error {
	if n != nil && *n < 0 {
		return fieldErr(at+".sizeGibibytes", "%d must not be negative (0 or none: the space the disks give)", *n)
	}
	return nil
}
