package importer

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// How an Ironic node's ports, properties, instance_info and extra map to
// host fields.

// bootMAC picks the boot MAC: the node's one PXE-enabled port (the lowest
// address when several are).
func bootMAC(ports []ironicPort) (string, string) {
	var pxe []string
	for _, p := range ports {
		if p.PXEEnabled == nil || *p.PXEEnabled {
			pxe = append(pxe, strings.ToLower(p.Address))
		}
	}
	sort.Strings(pxe)
	switch len(pxe) {
	case 0:
		if len(ports) > 0 {
			return "", "no PXE-enabled port: no bootMACAddress"
		}
		return "", ""
	case 1:
		return pxe[0], ""
	}
	return pxe[0], fmt.Sprintf("%d PXE-enabled ports (%s): bootMACAddress is the lowest", len(pxe), strings.Join(pxe, ", "))
}

// ironicRootHints maps properties.root_device to rootDeviceHints; an operator or
// hint rackfence cannot express is refused by name.
func ironicRootHints(v any) (*wire.RootDeviceHints, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("properties.root_device is not an object")
	}
	r := &wire.RootDeviceHints{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val := m[k]
		field := "properties.root_device." + k
		s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(str(val)), "s=="))
		if strings.HasPrefix(s, "<") || strings.HasPrefix(s, "s!=") {
			return nil, fmt.Errorf("%s %q: operators other than s== and >= are not supported; give the value itself", field, str(val))
		}
		switch k {
		case "name":
			r.DeviceName = s
		case "by_path":
			if r.DeviceName == "" {
				r.DeviceName = s
			}
		case "hctl":
			r.HCTL = s
		case "model":
			r.Model = s
		case "vendor":
			r.Vendor = s
		case "serial":
			r.SerialNumber = s
		case "wwn":
			r.WWN = s
		case "wwn_with_extension":
			r.WWNWithExtension = s
		case "wwn_vendor_extension":
			r.WWNVendorExtension = s
		case "rotational":
			b, err := strconv.ParseBool(strings.ToLower(s))
			if err != nil {
				return nil, fmt.Errorf("%s %q is not true or false", field, s)
			}
			r.Rotational = &b
		case "size":
			num := strings.TrimSpace(strings.TrimPrefix(s, ">="))
			gb, err := strconv.Atoi(num)
			if err != nil {
				return nil, fmt.Errorf("%s %q: give a number of GiB or \">= N\"", field, s)
			}
			r.MinSizeGigabytes = gb // an exact size becomes a minimum
		default:
			return nil, fmt.Errorf("%s is not a hint rackfence knows (name, by_path, hctl, model, vendor, serial, size, wwn, wwn_with_extension, wwn_vendor_extension, rotational)", field)
		}
	}
	return r, nil
}

// bootModeOf reads boot_mode (and secure_boot) from properties.capabilities
// ("k:v,k:v" or an object).
func bootModeOf(v any) (string, error) {
	caps := map[string]string{}
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		for _, kv := range strings.Split(t, ",") {
			k, val, _ := strings.Cut(strings.TrimSpace(kv), ":")
			caps[k] = val
		}
	case map[string]any:
		for k, val := range t {
			caps[k] = str(val)
		}
	default:
		return "", fmt.Errorf("properties.capabilities is neither \"key:value,...\" nor an object")
	}
	switch strings.ToLower(caps["boot_mode"]) {
	case "":
		return "", nil
	case "uefi":
		if strings.EqualFold(caps["secure_boot"], "true") {
			return wire.BootModeUEFISecure, nil
		}
		return wire.BootModeUEFI, nil
	case "bios":
		return wire.BootModeLegacy, nil
	}
	return "", fmt.Errorf("properties.capabilities boot_mode %q is not uefi or bios", caps["boot_mode"])
}

// ironicImage maps instance_info's image to the host's image where it is
// an http(s) URL; what cannot be carried over is noted.
func ironicImage(ii map[string]any) (*wire.Image, []string) {
	src := str(ii["image_source"])
	if src == "" {
		return nil, nil
	}
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, []string{fmt.Sprintf("instance_info.image_source %q is not an http(s) URL (a Glance image?): no image carried over", src)}
	}
	var notes []string
	im := &wire.Image{URL: src}
	algo, sum := strings.ToLower(str(ii["image_os_hash_algo"])), str(ii["image_os_hash_value"])
	switch {
	case sum != "" && (algo == wire.ChecksumMD5 || algo == wire.ChecksumSHA256 || algo == wire.ChecksumSHA512):
		im.Checksum, im.ChecksumType = sum, algo
	case str(ii["image_checksum"]) != "":
		// A digest, or the URL of a checksum file: rackfence takes both.
		im.Checksum = str(ii["image_checksum"])
	}
	if f := str(ii["image_disk_format"]); f != "" {
		ok := false
		for _, x := range wire.ImageFormats {
			ok = ok || x == f
		}
		if ok {
			im.Format = f
		} else {
			notes = append(notes, fmt.Sprintf("instance_info.image_disk_format %q is not one rackfence knows: not carried over", f))
		}
	}
	return im, notes
}

// extraLabels carries a node's extra entries over as labels where both key
// and value are valid label parts; the rest is noted.
func extraLabels(extra map[string]any) (map[string]string, []string) {
	if len(extra) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out map[string]string
	var dropped []string
	for _, k := range keys {
		v, ok := extra[k].(string)
		if !ok || wire.ValidateLabels("labels", map[string]string{k: v}) != nil {
			dropped = append(dropped, k)
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	var notes []string
	if len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("extra %s not carried over as labels (not a string, or not a valid label key or value)", strings.Join(dropped, ", ")))
	}
	return out, notes
}
