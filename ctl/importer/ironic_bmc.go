package importer

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// How an Ironic node's driver and driver_info map to a BMC address.

// ironicBMC maps driver and driver_info to a rackfence BMC address.
// ironicAddr is the address as Ironic holds it (a credentials file key).
func ironicBMC(n ironicNode) (addr, ironicAddr string, insecure bool, notes []string, err error) {
	di := n.DriverInfo
	switch n.Driver {
	case "redfish":
		return redfishBMC(di)
	case "ipmi":
		return ipmiBMC(di)
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

// redfishBMC maps the redfish driver's driver_info (redfish_address,
// redfish_system_id, redfish_verify_ca).
func redfishBMC(di map[string]any) (addr, ironicAddr string, insecure bool, notes []string, err error) {
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
}

// ipmiBMC maps the ipmi driver's driver_info (ipmi_address, ipmi_port).
func ipmiBMC(di map[string]any) (addr, ironicAddr string, insecure bool, notes []string, err error) {
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
}
