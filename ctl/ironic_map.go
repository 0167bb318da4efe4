package ctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/rackfence/rackfence/shared/api"
)

// ironicNode is the part of an Ironic node (GET /v1/nodes?fields=...) the
// import reads.
type ironicNode struct {
	UUID              string         `json:"uuid"`
	Name              string         `json:"name"`
	Driver            string         `json:"driver"`
	DriverInfo        map[string]any `json:"driver_info"`
	ProvisionState    string         `json:"provision_state"`
	PowerState        string         `json:"power_state"`
	Maintenance       bool           `json:"maintenance"`
	MaintenanceReason string         `json:"maintenance_reason"`
	Properties        map[string]any `json:"properties"`
	InstanceInfo      map[string]any `json:"instance_info"`
	Extra             map[string]any `json:"extra"`
	AutomatedClean    *bool          `json:"automated_clean"`
}

// ironicPort is one port (GET /v1/ports?fields=...).
type ironicPort struct {
	Address    string `json:"address"`
	NodeUUID   string `json:"node_uuid"`
	PXEEnabled *bool  `json:"pxe_enabled"`
}

// ironicOptions are import ironic's mapping flags.
type ironicOptions struct {
	Rack     string // --rack
	RackFrom string // --rack-from properties.KEY | extra.KEY
	Creds    ironicCreds
}

// How import ironic treats provision states: adopted as they run,
// registered, or skipped. An active node arrives externally provisioned,
// as Ironic's own "Active Node Creation" (adopt) takes over a running
// fleet: never redeployed. enroll is registered too: Ironic never checked
// its BMC, and the rack agent checks it when it registers the host.
var (
	ironicAdopted    = map[string]bool{"active": true}
	ironicRegistered = map[string]bool{"available": true, "manageable": true, "enroll": true}
)

// ironicSource names a node in the plan.
func ironicSource(n ironicNode) string {
	if n.Name == "" {
		return "node " + n.UUID
	}
	return "node " + n.Name + " (" + n.UUID + ")"
}

// convertIronic turns Ironic's nodes and ports into a plan input: hosts,
// credentials records, refused nodes (with why) and skipped ones (with
// their state).
func convertIronic(nodes []ironicNode, ports []ironicPort, o ironicOptions) (in *bmhInput, skipped []string) {
	in = &bmhInput{Records: map[string]api.Credentials{}}
	byNode := map[string][]ironicPort{}
	for _, p := range ports {
		byNode[p.NodeUUID] = append(byNode[p.NodeUUID], p)
	}
	sort.Slice(nodes, func(i, j int) bool { return hostNameOf(nodes[i]) < hostNameOf(nodes[j]) })
	usedCreds := map[string]bool{}
	hostFrom := map[string]string{}
	recordFrom := map[string]string{}
	for _, n := range nodes {
		src := ironicSource(n)
		if !ironicAdopted[n.ProvisionState] && !ironicRegistered[n.ProvisionState] {
			skipped = append(skipped, fmt.Sprintf("%s: provision state %q; only active, available, manageable and enroll nodes are imported: let Ironic settle it and run the import again", src, n.ProvisionState))
			continue
		}
		ph, key, errs := mapIronicNode(n, byNode[n.UUID], o)
		ph.Source = src
		if prev, ok := hostFrom[ph.Host.Name]; ok {
			errs = append(errs, fmt.Sprintf("host name %q is also that of %s", ph.Host.Name, prev))
		}
		hostFrom[ph.Host.Name] = src
		if len(errs) == 0 && ph.Host.BMC.Address != "" {
			rn := recordNameFor(ph.Host.Name)
			if prev, ok := recordFrom[rn]; ok {
				errs = append(errs, fmt.Sprintf("credentials record %q would also be that of %s", rn, prev))
			}
			recordFrom[rn] = src
			ph.Host.BMC.Credentials = rn
			ph.Secrets = []string{rn}
			if key != "" {
				usedCreds[key] = true
				c := o.Creds[key]
				user := c.Username
				if user == "" {
					user = ironicUsername(n)
				}
				if user == "" {
					errs = append(errs, fmt.Sprintf("credentials file entry %q has no username and driver_info has none either: add username to the entry", key))
				}
				in.Records[rn] = api.Credentials{Name: rn, Username: user, Password: c.Password}
			}
		}
		if len(errs) == 0 {
			if err := api.ValidateHost(&ph.Host, ph.Host.Name); err != nil {
				var fe *api.FieldError
				if errors.As(err, &fe) {
					errs = append(errs, fmt.Sprintf("mapped host field %s %s", fe.Field, fe.Message))
				} else {
					errs = append(errs, err.Error())
				}
			}
		}
		if len(errs) > 0 {
			for _, e := range errs {
				in.Refused = append(in.Refused, src+": "+e)
			}
			continue
		}
		for _, note := range ph.notes {
			in.Notes = append(in.Notes, src+": "+note)
		}
		in.Hosts = append(in.Hosts, *ph)
	}
	var unused []string
	for k := range o.Creds {
		if !usedCreds[k] {
			unused = append(unused, k)
		}
	}
	sort.Strings(unused)
	for _, k := range unused {
		in.Notes = append(in.Notes, fmt.Sprintf("credentials file entry %q matches no imported node", k))
	}
	in.missingWhy = func(records []string) string {
		return fmt.Sprintf("no credentials: the credentials file has no entry for the node's name, UUID or BMC address, and credentials record %s does not exist; add an entry (username, password) to --credentials-file, create the record (rackfencectl credentials set %s), or pass --allow-missing-credentials",
			strings.Join(records, ", "), records[0])
	}
	return in, skipped
}

// hostNameOf is the rackfence host name of a node: its name when that is a
// valid rackfence name, else its UUID (lower-case hex and '-', valid).
func hostNameOf(n ironicNode) string {
	if n.Name != "" && api.ValidateName("name", n.Name) == nil {
		return n.Name
	}
	return strings.ToLower(n.UUID)
}

// recordNameFor names the credentials record of a host: NAME-bmc, or
// NAME itself when that would be longer than 63 characters.
func recordNameFor(host string) string {
	if len(host)+4 <= 63 {
		return host + "-bmc"
	}
	return host
}

// mapIronicNode maps one node; key is the credentials file entry used ("":
// none found).
func mapIronicNode(n ironicNode, ports []ironicPort, o ironicOptions) (ph *plannedHost, key string, errs []string) {
	ph = &plannedHost{}
	h := &ph.Host
	h.Name = hostNameOf(n)
	if n.Name != "" && h.Name != n.Name {
		ph.notes = append(ph.notes, fmt.Sprintf("name %q is not a valid rackfence name (lower-case letters, digits, '-'): imported as %s", n.Name, h.Name))
	}
	rack, err := ironicRack(n, o)
	if err != nil {
		errs = append(errs, err.Error())
	}
	h.Rack = rack
	addr, ironicAddr, insecure, notes, err := ironicBMC(n)
	if err != nil {
		errs = append(errs, err.Error())
	}
	ph.notes = append(ph.notes, notes...)
	h.BMC.Address = addr
	h.BMC.DisableCertificateVerification = insecure
	for _, k := range []string{n.UUID, n.Name, addr, ironicAddr} {
		if _, ok := o.Creds[k]; ok && k != "" {
			key = k
			break
		}
	}
	h.ExternallyProvisioned = ironicAdopted[n.ProvisionState]
	h.Online = n.PowerState == "power on"
	if n.ProvisionState == "enroll" {
		ph.notes = append(ph.notes, "enroll: Ironic never verified its BMC; the rack agent registers it like a new host")
	}
	if n.Maintenance {
		why := n.MaintenanceReason
		if why == "" {
			why = "no reason given"
		}
		ph.notes = append(ph.notes, fmt.Sprintf("in Ironic's maintenance mode (%s): imported and managed by rackfence; 'rackfencectl drain %s --mode maintenance' keeps power actions off it", why, h.Name))
	}
	if n.AutomatedClean != nil {
		h.AutomatedCleaningMode = api.CleaningDisabled
		if *n.AutomatedClean {
			h.AutomatedCleaningMode = api.CleaningMetadata
		}
	}
	mac, note := bootMAC(ports)
	h.BootMACAddress = mac
	if note != "" {
		ph.notes = append(ph.notes, note)
	}
	if rd, ok := n.Properties["root_device"]; ok && rd != nil {
		hints, err := ironicRootHints(rd)
		if err != nil {
			errs = append(errs, err.Error())
		}
		h.RootDeviceHints = hints
	}
	mode, err := bootModeOf(n.Properties["capabilities"])
	if err != nil {
		errs = append(errs, err.Error())
	}
	h.BootMode = mode
	img, notes := ironicImage(n.InstanceInfo)
	h.Image = img
	ph.notes = append(ph.notes, notes...)
	labels, notes := extraLabels(n.Extra)
	h.Labels = labels
	ph.notes = append(ph.notes, notes...)
	return ph, key, errs
}

// ironicRack reads the rack from --rack-from (properties.KEY, extra.KEY),
// falling back to --rack.
func ironicRack(n ironicNode, o ironicOptions) (string, error) {
	if o.RackFrom == "" {
		if o.Rack == "" {
			return "", fmt.Errorf("no rack: give --rack R or --rack-from properties.KEY|extra.KEY")
		}
		return o.Rack, nil
	}
	root, key, _ := strings.Cut(o.RackFrom, ".")
	m := n.Properties
	if root == "extra" {
		m = n.Extra
	}
	v, ok := m[key].(string)
	if !ok || v == "" {
		if o.Rack != "" {
			return o.Rack, nil
		}
		if _, there := m[key]; there {
			return "", fmt.Errorf("%s is not a string: the rack must be a name like r1", o.RackFrom)
		}
		return "", fmt.Errorf("%s is not set (--rack-from) and no --rack was given", o.RackFrom)
	}
	if err := api.ValidateName(o.RackFrom, v); err != nil {
		return "", fmt.Errorf("rack from %v", err)
	}
	return v, nil
}

// ironicBMC maps driver and driver_info to a rackfence BMC address.
// ironicAddr is the address as Ironic holds it (a credentials file key).
func ironicBMC(n ironicNode) (addr, ironicAddr string, insecure bool, notes []string, err error) {
	di := n.DriverInfo
	switch n.Driver {
	case "redfish":
		raw := str(di["redfish_address"])
		if raw == "" {
			return "", "", false, nil, fmt.Errorf("driver redfish: driver_info.redfish_address is empty")
		}
		ironicAddr = raw
		withScheme := raw
		if !strings.Contains(raw, "://") {
			withScheme = "https://" + raw // Ironic's default
		}
		u, perr := url.Parse(withScheme)
		if perr != nil || u.Host == "" {
			return "", ironicAddr, false, nil, fmt.Errorf("driver_info.redfish_address %q is not an address", raw)
		}
		scheme := "redfish"
		switch u.Scheme {
		case "https":
		case "http":
			scheme = "redfish+http"
		default:
			return "", ironicAddr, false, nil, fmt.Errorf("driver_info.redfish_address %q: scheme %q is not http or https", raw, u.Scheme)
		}
		if strings.Trim(u.Path, "/") != "" {
			return "", ironicAddr, false, nil, fmt.Errorf("driver_info.redfish_address %q has a path; rackfence takes the system path from driver_info.redfish_system_id only", raw)
		}
		sys := str(di["redfish_system_id"])
		if sys != "" && !strings.HasPrefix(sys, "/") {
			sys = "/" + sys
		}
		if sys == "" {
			notes = append(notes, "driver_info.redfish_system_id is not set: the rack agent uses the BMC's only system")
		}
		addr = scheme + "://" + u.Host + sys
		if scheme == "redfish" {
			switch v := di["redfish_verify_ca"].(type) {
			case nil:
			case bool:
				insecure = !v
			case string:
				switch strings.ToLower(v) {
				case "false", "no", "0", "off":
					insecure = true
				case "true", "yes", "1", "on":
				default:
					notes = append(notes, fmt.Sprintf("driver_info.redfish_verify_ca names a CA bundle (%s): not carried over; the rack agent verifies the BMC's certificate with its own trust store", v))
				}
			}
		}
		return addr, ironicAddr, insecure, notes, nil
	case "ipmi":
		host := str(di["ipmi_address"])
		if host == "" {
			return "", "", false, nil, fmt.Errorf("driver ipmi: driver_info.ipmi_address is empty")
		}
		ironicAddr = host
		hp := host
		if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			hp = "[" + host + "]"
		}
		if p := str(di["ipmi_port"]); p != "" {
			n, perr := strconv.Atoi(p)
			if perr != nil || n < 1 || n > 65535 {
				return "", ironicAddr, false, nil, fmt.Errorf("driver_info.ipmi_port %q is not a port number", p)
			}
			hp = net.JoinHostPort(host, p)
		}
		return "ipmi://" + hp, ironicAddr, false, nil, nil
	case "":
		return "", "", false, nil, fmt.Errorf("has no driver")
	}
	return "", "", false, nil, fmt.Errorf("driver %q is not supported: rackfence speaks Redfish and IPMI (Ironic drivers redfish and ipmi); if the BMC speaks Redfish, switch the node to the redfish driver or add the host by hand (rackfencectl host apply)", n.Driver)
}

// ironicUsername is driver_info's BMC user name (Ironic does not mask it).
func ironicUsername(n ironicNode) string {
	if n.Driver == "ipmi" {
		return str(n.DriverInfo["ipmi_username"])
	}
	return str(n.DriverInfo["redfish_username"])
}

// str renders a JSON scalar (string or number) as a string; "" for others.
func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case int:
		return strconv.Itoa(t)
	case json.Number: // gophercloud decodes numbers so
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	}
	return ""
}

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
func ironicRootHints(v any) (*api.RootDeviceHints, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("properties.root_device is not an object")
	}
	r := &api.RootDeviceHints{}
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
			return api.BootModeUEFISecure, nil
		}
		return api.BootModeUEFI, nil
	case "bios":
		return api.BootModeLegacy, nil
	}
	return "", fmt.Errorf("properties.capabilities boot_mode %q is not uefi or bios", caps["boot_mode"])
}

// ironicImage maps instance_info's image to the host's image where it is
// an http(s) URL; what cannot be carried over is noted.
func ironicImage(ii map[string]any) (*api.Image, []string) {
	src := str(ii["image_source"])
	if src == "" {
		return nil, nil
	}
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, []string{fmt.Sprintf("instance_info.image_source %q is not an http(s) URL (a Glance image?): no image carried over", src)}
	}
	var notes []string
	im := &api.Image{URL: src}
	algo, sum := strings.ToLower(str(ii["image_os_hash_algo"])), str(ii["image_os_hash_value"])
	switch {
	case sum != "" && (algo == api.ChecksumMD5 || algo == api.ChecksumSHA256 || algo == api.ChecksumSHA512):
		im.Checksum, im.ChecksumType = sum, algo
	case str(ii["image_checksum"]) != "":
		c := str(ii["image_checksum"])
		if strings.Contains(c, "://") {
			notes = append(notes, "instance_info.image_checksum is a URL: not carried over (rackfence takes the digest)")
		} else {
			im.Checksum = c
		}
	}
	if f := str(ii["image_disk_format"]); f != "" {
		ok := false
		for _, x := range api.ImageFormats {
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
		if !ok || api.ValidateLabels("labels", map[string]string{k: v}) != nil {
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
