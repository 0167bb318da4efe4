package wire

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// FieldError is bad input: it names the field and what was wrong with it.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// isLabel reports whether v matches ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ (a
// loop rather than a regexp: it runs on every request's path and body, and
// the regexp was 2 % of the leader's CPU under write load).
func isLabel(v string) bool {
	if v == "" || v[0] == '-' || v[len(v)-1] == '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ValidateName checks a DNS-label-like name: lower-case letters, digits and
// '-', starting and ending with a letter or digit, at most 63 characters.
func ValidateName(field, v string) error {
	switch {
	case v == "":
		return fieldErr(field, "is required")
	case len(v) > 63:
		return fieldErr(field, "is %d characters long; at most 63 are allowed", len(v))
	case !isLabel(v):
		return fieldErr(field, "%q is not a valid name: use lower-case letters, digits and '-', starting and ending with a letter or digit", v)
	}
	return nil
}

// BMCScheme is a parsed BMC address.
type BMCScheme struct {
	Protocol string // "redfish" or "ipmi"
	Insecure bool   // redfish+http
	Host     string // host or IP
	Port     int    // 0 = protocol default
	Path     string // redfish system path, e.g. /redfish/v1/Systems/1
}

// ParseBMCAddress parses redfish://, redfish+http:// and ipmi://host:port.
func ParseBMCAddress(addr string) (BMCScheme, error) {
	var b BMCScheme
	u, err := url.Parse(addr)
	if err != nil {
		return b, fieldErr("bmc.address", "%q is not a URL: %v", addr, err)
	}
	switch u.Scheme {
	case "redfish", "redfish+https":
		b.Protocol = "redfish"
	case "redfish+http":
		b.Protocol, b.Insecure = "redfish", true
	case "ipmi":
		b.Protocol = "ipmi"
	default:
		return b, fieldErr("bmc.address", "scheme %q is not supported; use redfish://, redfish+http:// or ipmi://", u.Scheme)
	}
	b.Host = u.Hostname()
	if b.Host == "" {
		return b, fieldErr("bmc.address", "%q has no host", addr)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return b, fieldErr("bmc.address", "port %q is not a number from 1 to 65535", p)
		}
		b.Port = n
	}
	b.Path = u.Path
	return b, nil
}

// HostPort is host:port with the protocol's default port when none was given.
func (b BMCScheme) HostPort() string {
	p := b.Port
	if p == 0 {
		switch {
		case b.Protocol == "ipmi":
			p = 623
		case b.Insecure:
			p = 80
		default:
			p = 443
		}
	}
	return net.JoinHostPort(b.Host, strconv.Itoa(p))
}

// ValidateHost checks a host spec as PUT receives it. name is the path's
// name; an empty body name takes it, a different one is an error.
func ValidateHost(h *Host, name string) error {
	if h.Name == "" {
		h.Name = name
	}
	if err := ValidateName("name", h.Name); err != nil {
		return err
	}
	if name != "" && h.Name != name {
		return fieldErr("name", "%q does not match the name in the path (%q)", h.Name, name)
	}
	if err := ValidateName("rack", h.Rack); err != nil {
		return err
	}
	if h.BMC.Address != "" {
		if _, err := ParseBMCAddress(h.BMC.Address); err != nil {
			return err
		}
	}
	if h.BMC.Credentials != "" {
		if err := ValidateName("bmc.credentials", h.BMC.Credentials); err != nil {
			return err
		}
	}
	if err := validateSecretRefs(h); err != nil {
		return err
	}
	if h.BootMACAddress != "" {
		if _, err := net.ParseMAC(h.BootMACAddress); err != nil || len(h.BootMACAddress) != 17 {
			return fieldErr("bootMACAddress", "%q is not a MAC address like 52:54:00:00:01:07", h.BootMACAddress)
		}
		h.BootMACAddress = strings.ToLower(h.BootMACAddress)
	}
	if h.Image != nil {
		if h.Image.URL == "" {
			return fieldErr("image.url", "is required when image is given")
		}
		u, err := url.Parse(h.Image.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return fieldErr("image.url", "%q is not an absolute URL", h.Image.URL)
		}
		if err := validateImage(h.Image); err != nil {
			return err
		}
	}
	if h.RootDeviceHints != nil {
		if err := validateRootDeviceHints(h.RootDeviceHints); err != nil {
			return err
		}
	}
	if h.BootMode != "" && !oneOf(h.BootMode, BootModes) {
		return fieldErr("bootMode", "%q is not one of %s", h.BootMode, strings.Join(BootModes, ", "))
	}
	if h.BootMethod != "" && !oneOf(h.BootMethod, BootMethods) {
		return fieldErr("bootMethod", "%q is not one of %s (or empty: virtual media when the BMC has it, else network boot)", h.BootMethod, strings.Join(BootMethods, ", "))
	}
	if h.AutomatedCleaningMode != "" && !oneOf(h.AutomatedCleaningMode, CleaningModes) {
		return fieldErr("automatedCleaningMode", "%q is not one of %s", h.AutomatedCleaningMode, strings.Join(CleaningModes, ", "))
	}
	if err := ValidateLabels("labels", h.Labels); err != nil {
		return err
	}
	if err := validateDayTwo(h); err != nil {
		return err
	}
	if err := checkLen("consumer", h.Consumer, 253); err != nil {
		return err
	}
	if h.Handoff != nil {
		if err := ValidateName("handoff.sourceTier", h.Handoff.SourceTier); err != nil {
			return err
		}
		if h.Handoff.SourceClusterID == "" {
			return fieldErr("handoff.sourceClusterID", "is required")
		}
		if h.Handoff.DetachIndex == 0 {
			return fieldErr("handoff.detachIndex", "is required")
		}
	}
	return nil
}

// ValidateIntent checks the body of an intent POST for kind.
func ValidateIntent(kind string, r *IntentRequest) error {
	if err := checkLen("reason", r.Reason, 1024); err != nil {
		return err
	}
	switch kind {
	case IntentDrain:
		if r.Mode != DrainRemoval && r.Mode != DrainMaintenance {
			if r.Mode == "" {
				return fieldErr("mode", "is required: removal or maintenance")
			}
			return fieldErr("mode", "%q is not a drain mode: use removal or maintenance", r.Mode)
		}
		if r.Wipe && r.Mode != DrainRemoval {
			return fieldErr("wipe", "only applies to mode removal")
		}
	default:
		if r.Mode != "" {
			return fieldErr("mode", "only applies to drain")
		}
		if r.Wipe {
			return fieldErr("wipe", "only applies to drain")
		}
		if kind == IntentResume && r.Force {
			return fieldErr("force", "does not apply to resume")
		}
	}
	return nil
}

// ValidRole reports whether role is one of the four roles.
func ValidRole(role string) bool {
	switch role {
	case RoleViewer, RoleOperator, RoleAdmin, RoleAgent:
		return true
	}
	return false
}

// checkOneOf refuses v unless it is one of set, naming the set.
func checkOneOf(field, v string, set []string) error {
	if oneOf(v, set) {
		return nil
	}
	return fieldErr(field, "%q is not one of %s", v, strings.Join(set, ", "))
}

// checkLen refuses v when it is longer than max characters.
func checkLen(field, v string, max int) error {
	if len(v) <= max {
		return nil
	}
	return fieldErr(field, "is %d characters long; at most %d are allowed", len(v), max)
}

func oneOf(v string, set []string) bool {
	for _, x := range set {
		if x == v {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func validateImage(im *Image) error {
	if t := im.ChecksumType; t != "" && !oneOf(t, ImageChecksumTypes) {
		return fieldErr("image.checksumType", "%q is not one of %s", t, strings.Join(ImageChecksumTypes, ", "))
	}
	if f := im.Format; f != "" && !oneOf(f, ImageFormats) {
		return fieldErr("image.format", "%q is not one of %s", f, strings.Join(ImageFormats, ", "))
	}
	c := im.Checksum
	if c == "" {
		return nil
	}
	if cu := im.ChecksumURL(); cu != "" {
		if u, err := url.Parse(cu); err != nil || u.Host == "" {
			return fieldErr("image.checksum", "%q is not a URL of a checksum file (http(s)://HOST/PATH)", c)
		}
		return nil
	}
	if prefix, sum, ok := strings.Cut(c, ":"); ok {
		// The ALGO:HEX form, as accepted before checksumType existed.
		if sum == "" || (prefix != ChecksumMD5 && prefix != ChecksumSHA256 && prefix != ChecksumSHA512) {
			return fieldErr("image.checksum", "%q must be HEX, sha256:HEX, sha512:HEX, md5:HEX or the http(s) URL of a checksum file", c)
		}
		if t := im.ChecksumType; t != "" && t != ChecksumAuto && t != prefix {
			return fieldErr("image.checksumType", "%q does not match the checksum's %s: prefix", t, prefix)
		}
		return nil
	}
	if !isHex(c) {
		return fieldErr("image.checksum", "%q must be HEX, sha256:HEX, sha512:HEX, md5:HEX or the http(s) URL of a checksum file", c)
	}
	if algo, _ := im.ChecksumAlgo(); algo == "" {
		return fieldErr("image.checksum", "a digest of %d hex digits is no md5 (32), sha256 (64) or sha512 (128): set image.checksumType or an ALGO: prefix", len(c))
	}
	return nil
}

func validateRootDeviceHints(r *RootDeviceHints) error {
	for _, f := range []struct{ name, v string }{
		{"deviceName", r.DeviceName}, {"hctl", r.HCTL}, {"model", r.Model}, {"vendor", r.Vendor},
		{"serialNumber", r.SerialNumber}, {"wwn", r.WWN}, {"wwnWithExtension", r.WWNWithExtension},
		{"wwnVendorExtension", r.WWNVendorExtension},
	} {
		if err := checkLen("rootDeviceHints."+f.name, f.v, 256); err != nil {
			return err
		}
	}
	if d := r.DeviceName; d != "" && !strings.HasPrefix(d, "/dev/") {
		return fieldErr("rootDeviceHints.deviceName", "%q must be a device path starting with /dev/ (for example /dev/sda or /dev/disk/by-path/…)", d)
	}
	if h := r.HCTL; h != "" {
		parts := strings.Split(h, ":")
		ok := len(parts) == 4
		for _, p := range parts {
			if _, err := strconv.ParseUint(p, 10, 32); err != nil {
				ok = false
			}
		}
		if !ok {
			return fieldErr("rootDeviceHints.hctl", "%q must be Host:Channel:Target:Lun, four numbers like 0:0:0:0", h)
		}
	}
	if r.MinSizeGigabytes < 0 {
		return fieldErr("rootDeviceHints.minSizeGigabytes", "%d must not be negative", r.MinSizeGigabytes)
	}
	return nil
}
