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

// sameSystem: on one BMC, the same system path, or one of them none.
func sameSystem(a, b bmcMachine) bool {
	return a.system == "" || b.system == "" || a.system == b.system
}

// MachineIndex finds, among the BMC addresses added, one naming the same
// machine as another, in time proportional to the addresses of one BMC.
type MachineIndex struct {
	byBMC map[string][]machineEntry // by host:port
}

type machineEntry struct {
	m         bmcMachine
	addr, who string
}

// NewMachineIndex returns an empty index.
func NewMachineIndex() *MachineIndex { return &MachineIndex{byBMC: map[string][]machineEntry{}} }

// Add records that who has the BMC address addr (ignored when empty or
// not an address).
func (x *MachineIndex) Add(addr, who string) {
	if m, ok := machineOf(addr); ok {
		x.byBMC[m.hostPort] = append(x.byBMC[m.hostPort], machineEntry{m, addr, who})
	}
}

// Find returns who has an address naming the same machine as addr, and
// that address; ok false when none has.
func (x *MachineIndex) Find(addr string) (who, theirs string, ok bool) {
	m, valid := machineOf(addr)
	if !valid {
		return "", "", false
	}
	for _, e := range x.byBMC[m.hostPort] {
		if sameSystem(m, e.m) {
			return e.who, e.addr, true
		}
	}
	return "", "", false
}

// SameMachineHint is what to do about two hosts with one machine's BMC.
const SameMachineHint = "two hosts would manage one machine: remove one of them, or give each the path of its own system (redfish://BMC/redfish/v1/Systems/ID)"
