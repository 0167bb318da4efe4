package fsm

import "github.com/rackfence/rackfence/shared/wire"

// hostEntry is a host as the FSM's maps keep it: what every host has
// (names, BMC address, status, intents, indexes, events) in 176 bytes, and
// what a fleet host rarely sets (image, hints, modes, config drive
// references, labels, day-two spec, pivot, BMC task) behind one pointer,
// nil when none is set. A wire.Host is 344 bytes, most of them fields
// such a host leaves empty. Entries are immutable once stored, as their
// parts are (state.go); Apply works on a hostRec (rec) and stores a new
// entry (entryOf), reads build the wire.Host (host), which costs a copy
// of the fields and no allocation.
type hostEntry struct {
	Name, Rack     string
	BMCAddress     string
	BMCCredentials string
	BootMACAddress string
	Consumer       string
	Status         *wire.HostStatus
	Intents        *wire.Intents
	rare           *hostRare
	CreatedIndex   uint64
	ModifiedIndex  uint64
	SpecIndex      uint64
	Events         []eventRec
	flags          entryFlags
}

// entryFlags are a host's booleans.
type entryFlags uint8

const (
	flagOnline entryFlags = 1 << iota
	flagExternallyProvisioned
	flagDeletionRequested
	flagInsecureBMC // BMC.DisableCertificateVerification
)

// hostRare is the part of a host a fleet host rarely sets.
type hostRare struct {
	Image                      *wire.Image
	RootDeviceHints            *wire.RootDeviceHints
	BootMode                   string
	BootMethod                 string
	AutomatedCleaningMode      string
	UserData                   *wire.SecretReference
	NetworkData                *wire.SecretReference
	MetaData                   *wire.SecretReference
	PreprovisioningNetworkData *wire.SecretReference
	Labels                     map[string]string
	BIOS                       *wire.BIOSSpec
	Firmware                   []wire.FirmwareComponent
	RAID                       *wire.RAIDSpec
	UpdatePolicy               *wire.UpdatePolicy
	Handoff                    *wire.Handoff
	Task                       *wire.BMCTask
	PivotedTo                  string
}

// empty reports whether nothing of r is set (an empty, non-nil map or
// list counts as set: it reads back as it was stored).
func (r *hostRare) empty() bool {
	return r.Image == nil && r.RootDeviceHints == nil && r.BootMode == "" && r.BootMethod == "" &&
		r.AutomatedCleaningMode == "" && r.UserData == nil && r.NetworkData == nil && r.MetaData == nil &&
		r.PreprovisioningNetworkData == nil && r.Labels == nil && r.BIOS == nil && r.Firmware == nil &&
		r.RAID == nil && r.UpdatePolicy == nil && r.Handoff == nil && r.Task == nil && r.PivotedTo == ""
}

func setFlag(f *entryFlags, bit entryFlags, on bool) {
	if on {
		*f |= bit
	}
}

// entryOf returns h as an entry; h's parts become the entry's.
func entryOf(h *hostRec) *hostEntry {
	w := &h.Host
	e := &hostEntry{Name: w.Name, Rack: w.Rack, BMCAddress: w.BMC.Address, BMCCredentials: w.BMC.Credentials,
		BootMACAddress: w.BootMACAddress, Consumer: w.Consumer, Status: w.Status, Intents: w.Intents,
		CreatedIndex: w.CreatedIndex, ModifiedIndex: w.ModifiedIndex, SpecIndex: w.SpecIndex, Events: h.Events}
	setFlag(&e.flags, flagOnline, w.Online)
	setFlag(&e.flags, flagExternallyProvisioned, w.ExternallyProvisioned)
	setFlag(&e.flags, flagDeletionRequested, w.DeletionRequested)
	setFlag(&e.flags, flagInsecureBMC, w.BMC.DisableCertificateVerification)
	r := hostRare{Image: w.Image, RootDeviceHints: w.RootDeviceHints, BootMode: w.BootMode, BootMethod: w.BootMethod,
		AutomatedCleaningMode: w.AutomatedCleaningMode, UserData: w.UserData, NetworkData: w.NetworkData,
		MetaData: w.MetaData, PreprovisioningNetworkData: w.PreprovisioningNetworkData, Labels: w.Labels,
		BIOS: w.BIOS, Firmware: w.Firmware, RAID: w.RAID, UpdatePolicy: w.UpdatePolicy, Handoff: w.Handoff,
		Task: w.Task, PivotedTo: w.PivotedTo}
	if !r.empty() {
		e.rare = &r
	}
	return e
}

// host returns e as a wire.Host; its pointers reach e's (immutable) parts.
func (e *hostEntry) host() wire.Host {
	h := wire.Host{Name: e.Name, Rack: e.Rack,
		BMC:            wire.BMC{Address: e.BMCAddress, Credentials: e.BMCCredentials, DisableCertificateVerification: e.flags&flagInsecureBMC != 0},
		BootMACAddress: e.BootMACAddress, Online: e.flags&flagOnline != 0, ExternallyProvisioned: e.flags&flagExternallyProvisioned != 0,
		Consumer: e.Consumer, Status: e.Status, Intents: e.Intents, CreatedIndex: e.CreatedIndex, ModifiedIndex: e.ModifiedIndex,
		SpecIndex: e.SpecIndex, DeletionRequested: e.flags&flagDeletionRequested != 0}
	if r := e.rare; r != nil {
		h.Image, h.RootDeviceHints, h.BootMode, h.BootMethod = r.Image, r.RootDeviceHints, r.BootMode, r.BootMethod
		h.AutomatedCleaningMode, h.UserData, h.NetworkData, h.MetaData = r.AutomatedCleaningMode, r.UserData, r.NetworkData, r.MetaData
		h.PreprovisioningNetworkData, h.Labels, h.BIOS, h.Firmware = r.PreprovisioningNetworkData, r.Labels, r.BIOS, r.Firmware
		h.RAID, h.UpdatePolicy, h.Handoff, h.Task, h.PivotedTo = r.RAID, r.UpdatePolicy, r.Handoff, r.Task, r.PivotedTo
	}
	return h
}

// rec returns e as a record Apply may change and store (nil for nil).
func (e *hostEntry) rec() *hostRec {
	if e == nil {
		return nil
	}
	return &hostRec{Host: e.host(), Events: e.Events}
}

// full returns e in wire form (hostform.go).
func (e *hostEntry) full() *hostFull {
	return &hostFull{Host: e.host(), Events: eventsOf(e.Events)}
}

// The rare fields the FSM reads from stored entries.

func (e *hostEntry) task() *wire.BMCTask {
	if e.rare == nil {
		return nil
	}
	return e.rare.Task
}

func (e *hostEntry) handoff() *wire.Handoff {
	if e.rare == nil {
		return nil
	}
	return e.rare.Handoff
}

func (e *hostEntry) pivotedTo() string {
	if e.rare == nil {
		return ""
	}
	return e.rare.PivotedTo
}

func (e *hostEntry) labels() map[string]string {
	if e.rare == nil {
		return nil
	}
	return e.rare.Labels
}
