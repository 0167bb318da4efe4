package ironic

import (
	"fmt"
	"net"
	"strconv"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// ipmiCipherSuite is sent to ipmitool (-C 3): without it ipmitool tries
// suites in turn and stalls ~10 s per call on some BMCs and simulators.
const ipmiCipherSuite = "3"

// driverFor returns the hardware type and driver_info for a host: redfish
// (redfish_address, redfish_system_id, credentials, redfish_verify_ca per
// scheme) or ipmi (ipmi_address, ipmi_port, credentials, cipher suite 3).
// Config.Driver "fake-hardware" keeps the BMC details as driver_info for
// reference, but Ironic then talks to no BMC.
func (p *Provisioner) driverFor(h provisioner.Host) (string, map[string]any, error) {
	if h.BMC.Address == "" {
		return "", nil, fmt.Errorf("%w: host %s has no bmc.address: Ironic needs one to register it", errclass.ErrFailed, h.Name)
	}
	b, err := wire.ParseBMCAddress(h.BMC.Address)
	if err != nil {
		return "", nil, fmt.Errorf("%w: host %s: %v", errclass.ErrFailed, h.Name, err)
	}
	var driver string
	info := map[string]any{}
	switch b.Protocol {
	case "redfish":
		driver = "redfish"
		scheme := "https"
		if b.Insecure {
			scheme = "http"
		}
		hostport := b.Host
		if b.Port != 0 {
			hostport = net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
		} else if ip := net.ParseIP(b.Host); ip != nil && ip.To4() == nil {
			hostport = "[" + b.Host + "]"
		}
		info["redfish_address"] = scheme + "://" + hostport
		if b.Path != "" && b.Path != "/" {
			info["redfish_system_id"] = b.Path
		}
		info["redfish_username"] = h.Username
		info["redfish_password"] = h.Password
		if scheme == "https" {
			info["redfish_verify_ca"] = !h.BMC.DisableCertificateVerification
		}
	case "ipmi":
		driver = "ipmi"
		info["ipmi_address"] = b.Host
		port := b.Port
		if port == 0 {
			port = 623
		}
		info["ipmi_port"] = port
		info["ipmi_username"] = h.Username
		info["ipmi_password"] = h.Password
		info["ipmi_cipher_suite"] = ipmiCipherSuite
		info["ipmi_protocol_version"] = "2.0"
	default:
		return "", nil, fmt.Errorf("%w: host %s: BMC protocol %q is not supported by the ironic provisioner", errclass.ErrUnsupported, h.Name, b.Protocol)
	}
	if p.cfg.Driver != "" {
		driver = p.cfg.Driver
	}
	return driver, info, nil
}

// driverInfoChanged reports whether the node's driver_info differs from
// want in any key rackfence sets. Ironic masks passwords ("******") on
// reads, so a password change is only noticed through a failed verify.
func driverInfoChanged(have, want map[string]any) bool {
	for k, v := range want {
		if k == "redfish_password" || k == "ipmi_password" {
			continue
		}
		if fmt.Sprint(have[k]) != fmt.Sprint(v) {
			return true
		}
	}
	return false
}
