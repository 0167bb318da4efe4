package fsm

import (
	"strings"
	"sync"

	"github.com/rackfence/rackfence/shared/wire"
)

// Hardware details repeat across a fleet (the same CPU model, NIC names,
// firmware versions on thousands of hosts). Interning keeps one copy of each
// string in memory. The copy is equal to the string, so Apply stays
// deterministic.
//
// The copies are held in a table of at most internCap strings, emptied
// when full like the part tables (share.go), so strings that never repeat
// cost at most a restart of sharing. It used to be unique.Make(s).Value():
// unique holds its entries weakly, by the handle, and a string taken out
// with Value does not hold its entry, so every collection dropped them and
// a string interned after it got a new copy (hosts written in different
// collection cycles did not share; TestInternSurvivesCollection).

// internCap bounds the table: 16,384 strings of at most internMax bytes.
const (
	internCap = 16384
	internMax = 256
)

var interned struct {
	mu sync.Mutex // restore decodes snapshot chunks concurrently
	m  map[string]string
}

func in(s string) string {
	if s == "" || len(s) > internMax {
		return s
	}
	interned.mu.Lock()
	defer interned.mu.Unlock()
	if c, ok := interned.m[s]; ok {
		return c
	}
	if interned.m == nil || len(interned.m) >= internCap {
		interned.m = make(map[string]string)
	}
	c := strings.Clone(s) // not a piece of a larger buffer the caller holds
	interned.m[c] = c
	return c
}

// internStatus returns a copy of st with repeated strings interned, and
// its BMC details, CPU, disk, firmware and accelerator lists, Extra map
// and hardware health shared with every host whose are equal (share.go);
// what is not shared is owned by the copy. bootMAC is the host's
// bootMACAddress: a NIC reporting the same MAC keeps the spec's string
// instead of a second copy.
func internStatus(st wire.HostStatus, bootMAC string) wire.HostStatus {
	st.ProvisioningState = in(st.ProvisioningState)
	st.OperationalStatus = in(st.OperationalStatus)
	st.ErrorType, st.PowerState = in(st.ErrorType), in(st.PowerState)
	if st.Extra != nil {
		st.Extra = shareExtra(st.Extra)
	}
	if h := st.Health; h != nil {
		st.Health = shareHealth(h)
	}
	if cd := st.ConfigDrive; cd != nil {
		c := *cd
		c.Server = in(c.Server)
		st.ConfigDrive = &c
	}
	if oh := st.OperationHistory; oh != nil {
		c := *oh
		st.OperationHistory = &c
	}
	if hw := st.HardwareDetails; hw != nil {
		c := *hw
		c.Manufacturer, c.Model, c.BIOSVersion = in(c.Manufacturer), in(c.Model), in(c.BIOSVersion)
		if len(c.CPUs) > 0 {
			c.CPUs = shareCPUs(c.CPUs)
		}
		if len(c.NICs) > 0 {
			c.NICs = append([]wire.NIC(nil), c.NICs...)
			for i := range c.NICs {
				c.NICs[i].Name = in(c.NICs[i].Name)
				if c.NICs[i].MAC == bootMAC {
					c.NICs[i].MAC = bootMAC
				}
			}
		}
		if len(c.Disks) > 0 {
			c.Disks = shareDisks(c.Disks)
		}
		if len(c.Firmware) > 0 {
			c.Firmware = shareFirmware(c.Firmware)
		}
		if len(c.Accelerators) > 0 {
			c.Accelerators = shareAccelerators(c.Accelerators)
		}
		st.HardwareDetails = &c
	}
	if b := st.BMCDetails; b != nil {
		st.BMCDetails = shareBMC(b)
	}
	return st
}

// internBMC returns a copy of b with its strings interned, owning its
// lists (Problems nil when empty).
func internBMC(b *wire.BMCDetails) *wire.BMCDetails {
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
	return &c
}

// internSpec interns, in place, the strings of h's spec that repeat
// across hosts (rack, credentials, consumer, image, modes, labels, data
// record names, day-two spec) and of its pivot. h's pointers must be its
// own (cloned from a command, or decoded from a snapshot): the image and
// the data record references are changed in place.
func internSpec(h *wire.Host) {
	h.Rack, h.BMC.Credentials, h.Consumer = in(h.Rack), in(h.BMC.Credentials), in(h.Consumer)
	if i := h.Image; i != nil {
		i.URL, i.Checksum, i.ChecksumType, i.Format = in(i.URL), in(i.Checksum), in(i.ChecksumType), in(i.Format)
	}
	h.BootMode, h.AutomatedCleaningMode, h.BootMethod = in(h.BootMode), in(h.AutomatedCleaningMode), in(h.BootMethod)
	h.Labels = cloneLabels(h.Labels)
	for _, r := range []*wire.SecretReference{h.UserData, h.NetworkData, h.MetaData, h.PreprovisioningNetworkData} {
		if r != nil {
			r.Name = in(r.Name)
		}
	}
	if ho := h.Handoff; ho != nil {
		ho.SourceTier, ho.SourceClusterID = in(ho.SourceTier), in(ho.SourceClusterID)
	}
	h.PivotedTo = in(h.PivotedTo)
	cloneDayTwo(h)
}

// internRec interns and shares, in place, the spec and status of a record
// decoded from a snapshot (not yet visible to anyone), as Apply does for
// the records it builds (its events are interned when packed: recOf).
func internRec(h *hostRec) {
	internSpec(&h.Host)
	if h.Status != nil {
		st := internStatus(*h.Status, h.BootMACAddress)
		h.Status = &st
	}
}
