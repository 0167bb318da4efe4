package bmc

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rackfence/rackfence/agent/errclass"
)

// BIOSAttribute is one entry of a BIOS attribute registry (DMTF
// AttributeRegistry RegistryEntries.Attributes[]).
type BIOSAttribute struct {
	Name string
	// Type is Enumeration, String, Integer, Boolean or Password.
	Type string
	// Values are an Enumeration's ValueNames.
	Values []string
	// LowerBound, UpperBound bound an Integer; MinLength, MaxLength a
	// String or Password (nil: no bound).
	LowerBound, UpperBound *int64
	MinLength, MaxLength   *int64
	ReadOnly               bool
	ResetRequired          bool
}

// BIOSRegistry is an attribute registry by AttributeName.
type BIOSRegistry map[string]BIOSAttribute

// BIOSValues checks desired (attribute → value, as text) against reg and
// returns it as the JSON values the registry's types take (Integer →
// number, Boolean → true/false, others strings). An error names every
// attribute that is wrong and how: unknown, read-only, a value of the
// wrong type, out of range, not an allowed value; it wraps ErrBIOSInvalid
// (errclass.ErrFailed). Without a registry (the BMC publishes none) nothing is
// checked and every value stays a string.
func BIOSValues(desired map[string]string, reg BIOSRegistry) (map[string]any, error) {
	out := make(map[string]any, len(desired))
	var probs []string
	for _, name := range sortedNames(desired) {
		v := desired[name]
		if reg == nil {
			out[name] = v
			continue
		}
		typed, prob := checkBIOS(name, v, reg)
		if prob != "" {
			probs = append(probs, prob)
			continue
		}
		out[name] = typed
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrBIOSInvalid, strings.Join(probs, "; "))
	}
	return out, nil
}

// checkBIOS is value v of attribute name as its JSON value, or what is
// wrong with it.
func checkBIOS(name, v string, reg BIOSRegistry) (any, string) {
	a, ok := reg[name]
	switch {
	case !ok:
		return nil, fmt.Sprintf("attribute %s is not in the BMC's attribute registry%s", name, similar(name, reg))
	case a.ReadOnly:
		return nil, fmt.Sprintf("attribute %s is read-only", name)
	}
	switch a.Type {
	case "Enumeration":
		if !slices.Contains(a.Values, v) {
			return nil, fmt.Sprintf("attribute %s: %q is not an allowed value (allowed: %s)", name, v, strings.Join(a.Values, ", "))
		}
		return v, ""
	case "Integer":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Sprintf("attribute %s is an Integer; %q is not one", name, v)
		}
		if a.LowerBound != nil && n < *a.LowerBound || a.UpperBound != nil && n > *a.UpperBound {
			return nil, fmt.Sprintf("attribute %s: %d is out of range [%s, %s]", name, n, bound(a.LowerBound), bound(a.UpperBound))
		}
		return n, ""
	case "Boolean":
		switch v {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, fmt.Sprintf("attribute %s is a Boolean; %q is not true or false", name, v)
	case "String", "Password":
		if a.MinLength != nil && int64(len(v)) < *a.MinLength || a.MaxLength != nil && int64(len(v)) > *a.MaxLength {
			return nil, fmt.Sprintf("attribute %s: a value of length %d is out of range [%s, %s]", name, len(v), bound(a.MinLength), bound(a.MaxLength))
		}
		return v, ""
	}
	return nil, fmt.Sprintf("attribute %s has registry type %q, which this agent does not set", name, a.Type)
}

func bound(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

// similar suggests a registry name differing only in case.
func similar(name string, reg BIOSRegistry) string {
	for k := range reg {
		if strings.EqualFold(k, name) {
			return " (did you mean " + k + "?)"
		}
	}
	return ""
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The firmware settings BareMetalHost names (Metal3's FirmwareConfig),
// which rackfence profiles take too.
const (
	SettingSMT            = "simultaneousMultithreadingEnabled"
	SettingSRIOV          = "sriovEnabled"
	SettingVirtualization = "virtualizationEnabled"
)

// namedBIOS maps each named setting to the vendor's attribute (values
// Enabled/Disabled), by the service root's Vendor: HPE iLO 5/6
// (ProcHyperthreading, Sriov, ProcVirtualization; HPE's BIOS/platform
// attribute guide, Metal3's ilo5 driver) and Dell iDRAC 9/10
// (LogicalProc, SriovGlobalEnable, ProcVirtualization; Dell's BIOS
// attribute registry guide, Ironic's idrac BIOS examples). OpenBMC serves
// whatever the host firmware's BIOS config manager registers (e.g.
// POWER's pvm_*/hb_*): no fixed names.
var namedBIOS = map[string]map[string]string{
	"HPE":  {SettingSMT: "ProcHyperthreading", SettingSRIOV: "Sriov", SettingVirtualization: "ProcVirtualization"},
	"Dell": {SettingSMT: "LogicalProc", SettingSRIOV: "SriovGlobalEnable", SettingVirtualization: "ProcVirtualization"},
}

// NamedBIOSAttributes maps named settings (SettingSMT, SettingSRIOV,
// SettingVirtualization → on/off) to vendor's attributes and values. An
// unknown setting is errclass.ErrFailed; a vendor without fixed names
// (OpenBMC, any other) is errclass.ErrUnsupported naming it: give the platform's
// attribute names instead.
func NamedBIOSAttributes(vendor string, named map[string]bool) (map[string]string, error) {
	out := map[string]string{}
	if len(named) == 0 {
		return out, nil
	}
	names := namedBIOS[vendorKey(vendor)]
	for _, k := range sortedNames(named) {
		switch k {
		case SettingSMT, SettingSRIOV, SettingVirtualization:
		default:
			return nil, fmt.Errorf("%w: firmware setting %q is not one of %s, %s, %s", errclass.ErrFailed, k, SettingSMT, SettingSRIOV, SettingVirtualization)
		}
		if names == nil {
			return nil, fmt.Errorf("%w: firmware setting %s: BMC vendor %q has no fixed BIOS attribute names (known: HPE, Dell); give the platform's attribute names from its attribute registry instead", errclass.ErrUnsupported, k, vendor)
		}
		v := "Disabled"
		if named[k] {
			v = "Enabled"
		}
		out[names[k]] = v
	}
	return out, nil
}

// vendorKey is the namedBIOS key of a service root's Vendor (or a
// manager's Manufacturer).
func vendorKey(v string) string {
	low := strings.ToLower(v)
	switch {
	case strings.Contains(low, "hpe"), strings.Contains(low, "hewlett"):
		return "HPE"
	case strings.Contains(low, "dell"):
		return "Dell"
	}
	return v
}
