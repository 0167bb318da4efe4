package importer

import (
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// Two hosts whose BMC addresses name one machine would have two managers
// for it. Addresses are compared after BMO's schemes are mapped
// (redfish+https://, idrac-redfish://, ilo5-virtualmedia://… all become
// redfish://): the same host (case-insensitive) and port (the protocol's
// default when none is given) name the same BMC; on one BMC, different
// Redfish system paths name different machines (sushy-tools and
// multi-node chassis serve many), and an address without a system path
// names the BMC's only system, so it is the same machine as any of them.

// bmcMachine is what a rackfence BMC address names.
type bmcMachine struct {
	hostPort string // host:port, host lower-cased
	system   string // Redfish system path without a trailing "/"; "" for IPMI or none given
}

func machineOf(addr string) (bmcMachine, bool) {
	if addr == "" {
		return bmcMachine{}, false
	}
	b, err := wire.ParseBMCAddress(addr)
	if err != nil {
		return bmcMachine{}, false
	}
	b.Host = strings.ToLower(b.Host)
	m := bmcMachine{hostPort: b.HostPort()}
	if b.Protocol == "redfish" {
		m.system = strings.TrimRight(b.Path, "/")
	}
	return m, true
}

// SameMachine says whether two rackfence BMC addresses name one machine.
func SameMachine(a, b string) bool {
	ma, ok := machineOf(a)
	if !ok {
		return false
	}
	mb, ok := machineOf(b)
	if !ok || ma.hostPort != mb.hostPort {
		return false
	}
	return ma.system == "" || mb.system == "" || ma.system == mb.system
}

// SameMachineHint is what to do about two hosts with one machine's BMC.
const SameMachineHint = "two hosts would manage one machine: remove one of them, or give each the path of its own system (redfish://BMC/redfish/v1/Systems/ID)"
