package wire

import "time"

// Day-two spec: the BIOS settings, firmware and RAID layout an operator
// wants a host to have, modelled on metal3's BareMetalHost
// (spec.firmware, spec.raid), HostFirmwareSettings (spec.settings),
// HostFirmwareComponents (spec.updates) and HostUpdatePolicy. The
// coordinator stores and validates them (validate_daytwo.go); the rack
// agent applies them.

// BIOSSpec is the BIOS settings a host should have. The three switches
// are metal3's spec.firmware (the agent maps them to the vendor's
// attribute); Settings names any attribute of the BMC's BIOS attribute
// registry (metal3 HostFirmwareSettings.spec.settings). Nil: leave it as
// it is.
type BIOSSpec struct {
	SimultaneousMultithreadingEnabled *bool `json:"simultaneousMultithreadingEnabled,omitempty"`
	SRIOVEnabled                      *bool `json:"sriovEnabled,omitempty"`
	VirtualizationEnabled             *bool `json:"virtualizationEnabled,omitempty"`
	// Settings maps a registry attribute name (ProcTurboMode, BootMode…)
	// to its value as the registry spells it.
	Settings map[string]string `json:"settings,omitempty"`
}

// FirmwareComponent is one firmware update (metal3
// HostFirmwareComponents.spec.updates[]).
type FirmwareComponent struct {
	// Component is bmc, bios, nic:ID or an id of the BMC's firmware
	// inventory (Redfish UpdateService FirmwareInventory member).
	Component string `json:"component"`
	// URL is where the BMC fetches the image (http or https).
	URL string `json:"url"`
	// Checksum is sha256:HEX or sha512:HEX of the image; empty: none checked.
	Checksum string `json:"checksum,omitempty"`
	// Version is the version the component reports once updated; empty:
	// the update succeeded when the version differs from the one before.
	Version string `json:"version,omitempty"`
	// Timeout is how long the update may run before the agent reports it
	// failed (default FirmwareTimeoutDefault: slow BMCs take 30 minutes to
	// flash and reboot). The agent never powers the host off to end it.
	Timeout Duration `json:"timeout,omitempty"`
}

// Firmware update timeouts: the default and the accepted range.
const (
	FirmwareTimeoutDefault = 60 * time.Minute
	FirmwareTimeoutMin     = 5 * time.Minute
	FirmwareTimeoutMax     = 24 * time.Hour
)

// EffectiveTimeout is the component's timeout, the default when unset.
func (f FirmwareComponent) EffectiveTimeout() time.Duration {
	if f.Timeout <= 0 {
		return FirmwareTimeoutDefault
	}
	return f.Timeout.D()
}

// Firmware components with a name of their own; any other component is
// nic:ID or a firmware inventory id.
const (
	ComponentBMC  = "bmc"
	ComponentBIOS = "bios"
	// ComponentNICPrefix starts a NIC's component: nic:ID.
	ComponentNICPrefix = "nic:"
)

// RAIDSpec is the RAID layout a host should have (metal3 spec.raid).
// Hardware and software volumes exclude each other.
type RAIDSpec struct {
	HardwareRAIDVolumes []HardwareRAIDVolume `json:"hardwareRAIDVolumes,omitempty"`
	SoftwareRAIDVolumes []SoftwareRAIDVolume `json:"softwareRAIDVolumes,omitempty"`
	// KeepExisting keeps the controllers' volumes and adds these; false:
	// the existing volumes are deleted and these created (which erases
	// what they held).
	KeepExisting bool `json:"keepExisting,omitempty"`
}

// HardwareRAIDVolume is one volume of a RAID controller (metal3
// HardwareRAIDVolume).
type HardwareRAIDVolume struct {
	Name string `json:"name,omitempty"`
	// Level is one of RAIDLevels.
	Level string `json:"level"`
	// SizeGibibytes: nil or 0 takes the space the disks give.
	SizeGibibytes         *int     `json:"sizeGibibytes,omitempty"`
	Rotational            *bool    `json:"rotational,omitempty"`
	NumberOfPhysicalDisks *int     `json:"numberOfPhysicalDisks,omitempty"`
	Controller            string   `json:"controller,omitempty"`
	PhysicalDisks         []string `json:"physicalDisks,omitempty"`
}

// SoftwareRAIDVolume is one Linux software RAID volume (metal3
// SoftwareRAIDVolume); the first one holds the root file system and is
// level 1.
type SoftwareRAIDVolume struct {
	Level         string            `json:"level"`
	SizeGibibytes *int              `json:"sizeGibibytes,omitempty"`
	PhysicalDisks []RootDeviceHints `json:"physicalDisks,omitempty"`
}

// RAID levels as metal3 spells them.
var (
	RAIDLevels         = []string{"0", "1", "2", "5", "6", "1+0", "5+0", "6+0"}
	SoftwareRAIDLevels = []string{"0", "1", "1+0"}
)

// UpdatePolicy says whether BIOS settings and firmware updates change on a
// provisioned host (BMO HostUpdatePolicy): onReboot applies them at the
// host's next reboot; empty applies them only before provisioning.
type UpdatePolicy struct {
	FirmwareSettings string `json:"firmwareSettings,omitempty"`
	FirmwareUpdates  string `json:"firmwareUpdates,omitempty"`
}

// UpdatePolicyOnReboot is UpdatePolicy's one value.
const UpdatePolicyOnReboot = "onReboot"

// DayTwoStatus is what the agent found of a host's day-two state
// (HostStatus.DayTwo): each part is what the agent last read or did. A
// coordinator stores it once every voter applies it (status body
// versions with day-two status); until then it writes reports without it.
type DayTwoStatus struct {
	BIOS *BIOSStatus `json:"bios,omitempty"`
	// Firmware is the BMC's firmware inventory.
	Firmware []FirmwareStatus `json:"firmware,omitempty"`
	// HardwareRAIDVolumes and SoftwareRAIDVolumes are the volumes found.
	HardwareRAIDVolumes []HardwareRAIDVolume `json:"hardwareRAIDVolumes,omitempty"`
	SoftwareRAIDVolumes []SoftwareRAIDVolume `json:"softwareRAIDVolumes,omitempty"`
	// LastErase is the last disk erase.
	LastErase *EraseStatus `json:"lastErase,omitempty"`
}

// EraseStatus is a disk erase the agent ran, and how each disk was
// erased.
type EraseStatus struct {
	Time time.Time `json:"time"`
	// Disks are "ID: method" (Drive.SecureErase, Volume.Initialize (Slow)).
	Disks []string `json:"disks"`
}

// BIOSStatus is a host's BIOS attributes as the BMC reports them.
type BIOSStatus struct {
	Settings map[string]string `json:"settings,omitempty"`
	// LastApplied is when the agent last applied settings.
	LastApplied time.Time `json:"lastApplied,omitzero"`
	// NotApplied are the settings the BMC refused or did not take.
	NotApplied []BIOSSettingError `json:"notApplied,omitempty"`
}

// BIOSSettingError is one setting that did not take, and why.
type BIOSSettingError struct {
	Name    string `json:"name"`
	Value   string `json:"value,omitempty"`
	Message string `json:"message,omitempty"`
}

// FirmwareStatus is one component of the firmware inventory.
type FirmwareStatus struct {
	Component   string    `json:"component"`
	Version     string    `json:"version,omitempty"`
	Updateable  bool      `json:"updateable,omitempty"`
	LastUpdated time.Time `json:"lastUpdated,omitzero"`
}
