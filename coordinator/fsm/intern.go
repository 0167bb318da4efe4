package fsm

import (
	"unique"

	"github.com/rackfence/rackfence/shared/wire"
)

// Hardware details repeat across a fleet (the same CPU model, NIC names,
// firmware versions on thousands of hosts). Interning keeps one copy of each
// string in memory. unique.Make is deterministic, so it is safe in Apply.

func in(s string) string {
	if s == "" || len(s) > 256 {
		return s
	}
	return unique.Make(s).Value()
}

// internStatus returns a copy of st with repeated strings interned and
// every slice and map owned by the copy.
func internStatus(st wire.HostStatus) wire.HostStatus {
	st.ProvisioningState = in(st.ProvisioningState)
	st.OperationalStatus = in(st.OperationalStatus)
	st.ErrorType = in(st.ErrorType)
	if st.Extra != nil {
		m := make(map[string]string, len(st.Extra))
		for k, v := range st.Extra {
			m[in(k)] = in(v)
		}
		st.Extra = m
	}
	if oh := st.OperationHistory; oh != nil {
		c := *oh
		st.OperationHistory = &c
	}
	if hw := st.HardwareDetails; hw != nil {
		c := *hw
		c.Manufacturer, c.Model, c.BIOSVersion = in(c.Manufacturer), in(c.Model), in(c.BIOSVersion)
		if len(c.CPUs) > 0 {
			c.CPUs = append([]wire.CPU(nil), c.CPUs...)
			for i := range c.CPUs {
				c.CPUs[i].Model = in(c.CPUs[i].Model)
			}
		}
		if len(c.NICs) > 0 {
			c.NICs = append([]wire.NIC(nil), c.NICs...)
			for i := range c.NICs {
				c.NICs[i].Name = in(c.NICs[i].Name)
			}
		}
		if len(c.Disks) > 0 {
			c.Disks = append([]wire.Disk(nil), c.Disks...)
			for i := range c.Disks {
				c.Disks[i].Name, c.Disks[i].Model, c.Disks[i].Type = in(c.Disks[i].Name), in(c.Disks[i].Model), in(c.Disks[i].Type)
			}
		}
		if len(c.Firmware) > 0 {
			c.Firmware = append([]wire.Firmware(nil), c.Firmware...)
			for i := range c.Firmware {
				c.Firmware[i].Name, c.Firmware[i].Version = in(c.Firmware[i].Name), in(c.Firmware[i].Version)
			}
		}
		if len(c.Accelerators) > 0 {
			c.Accelerators = append([]wire.Accelerator(nil), c.Accelerators...)
			for i := range c.Accelerators {
				a := &c.Accelerators[i]
				a.Name, a.Type, a.Model = in(a.Name), in(a.Type), in(a.Model)
			}
		}
		st.HardwareDetails = &c
	}
	if b := st.BMCDetails; b != nil {
		c := *b
		c.Protocol, c.RedfishVersion, c.Vendor, c.Model = in(c.Protocol), in(c.RedfishVersion), in(c.Vendor), in(c.Model)
		c.FirmwareVersion, c.Auth, c.VirtualMediaMethod = in(c.FirmwareVersion), in(c.Auth), in(c.VirtualMediaMethod)
		c.System, c.Manager, c.VirtualMedia = in(c.System), in(c.Manager), in(c.VirtualMedia)
		if len(c.BootModes) > 0 {
			c.BootModes = append([]string(nil), c.BootModes...)
			for i := range c.BootModes {
				c.BootModes[i] = in(c.BootModes[i])
			}
		}
		c.Problems = append([]string(nil), c.Problems...)
		st.BMCDetails = &c
	}
	return st
}
