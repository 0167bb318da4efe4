// Package provisioner is the one interface the rack agent drives a host's
// lifecycle through. Two implementations: direct/ (BMC only: Redfish
// through agent/bmc's gofish layer, IPMI through bmclib) and ironic/
// (OpenStack Ironic over gophercloud).
//
// Every method that changes a BMC or a provisioner's record must reach the
// outside world only through the agent's guard.Guard (agent/guard).
package provisioner

import (
	"context"

	"github.com/rackfence/rackfence/shared/wire"
)

// Errors: a provisioner wraps every error it returns in exactly one
// agent/errclass class (fmt.Errorf("%w: …", errclass.ErrX)) so the state
// machine can act on it with errors.Is whichever layer (agent/bmc, a
// provisioner) wrapped it; an error wrapping none is treated as
// errclass.ErrFailed. guard.ErrFenced (agent/guard) is also passed through
// unchanged: the agent lost its lease or the host is blocked.

// Host is what a provisioner needs to know about one host.
type Host struct {
	Name           string
	BMC            wire.BMC
	Username       string // BMC credentials, revealed to the agent
	Password       string
	BootMACAddress string
	Image          *wire.Image
	Online         bool
	// RootDeviceHints, BootMode ("" = UEFI) and AutomatedCleaningMode
	// ("" = metadata) are the spec's (see wire.Host).
	RootDeviceHints *wire.RootDeviceHints
	BootMode        string
	// BootMethod is the spec's (wire.Host.BootMethod; "" = chosen from
	// what the BMC offers).
	BootMethod            string
	AutomatedCleaningMode string
	// ConfigDrive is the content revealed from the records the spec's
	// userData/networkData/metaData name; nil when it names none.
	ConfigDrive *ConfigDrive
	// ConfigDriveWanted: the spec names userData, networkData or metaData
	// (ConfigDrive is revealed for provisioning only).
	ConfigDriveWanted bool
	// PreprovisioningNetworkData is the deploy ramdisk's network
	// configuration (JSON), from the record the spec names; nil when none.
	PreprovisioningNetworkData []byte
	// ProvisioningID is the provisioner's own ID for the host (Ironic node
	// UUID), from the last status; empty before registration.
	ProvisioningID string
	// HardwareDetails from the last status (pivoted-in hosts carry them, so
	// inspection is skipped).
	HardwareDetails *wire.HardwareDetails
}

// ConfigDrive is what a config drive carries (OpenStack config-2 layout):
// each field is the raw content of the record's key, nil when the spec
// names no record for it.
type ConfigDrive struct {
	UserData    []byte // openstack/latest/user_data
	NetworkData []byte // openstack/latest/network_data.json (JSON)
	MetaData    []byte // merged into openstack/latest/meta_data.json (JSON object)
}

// Result is what a call learnt about the host.
type Result struct {
	ProvisioningID  string
	PoweredOn       *bool
	HardwareDetails *wire.HardwareDetails
	// BMCDetails is what the call learnt about the BMC (Register), nil
	// when it learnt nothing new.
	BMCDetails *wire.BMCDetails
	// ConfigDrive is the config drive the call published (Provision),
	// nil when it published none.
	ConfigDrive *wire.ConfigDriveStatus
	// InProgress is true when the operation was started but has not finished
	// (e.g. Ironic is still deploying): call the same method again later.
	InProgress bool
	// Message is a human-readable note for the host's events.
	Message string
	// ResetNeeded: what the call changed takes only at the system's next
	// reset (BIOS settings), which is the caller's to do.
	ResetNeeded bool
	// DayTwo is what the call read of the host's BIOS, firmware, volumes
	// or last erase (the parts it sets), nil when nothing.
	DayTwo *wire.DayTwoStatus
}

// Provisioner drives one kind of back end. Implementations are safe for
// concurrent use on different hosts; the agent never calls two methods for
// the same host at once.
type Provisioner interface {
	// Name is "direct" or "ironic".
	Name() string
	// Register makes the back end know the host and checks its BMC
	// credentials (no power change). errclass.ErrAuth on bad credentials.
	Register(ctx context.Context, h Host) (Result, error)
	// Inspect reads hardware details.
	Inspect(ctx context.Context, h Host) (Result, error)
	// Provide makes a registered, inspected host available (Ironic: provide
	// and cleaning; direct: nothing).
	Provide(ctx context.Context, h Host) (Result, error)
	// Provision writes h.Image and boots the host from it.
	Provision(ctx context.Context, h Host) (Result, error)
	// Deprovision removes the image and powers the host off.
	Deprovision(ctx context.Context, h Host) (Result, error)
	// Adopt takes over a host already running (externally provisioned)
	// without any power change.
	Adopt(ctx context.Context, h Host) (Result, error)
	// Detach stops all management without deprovisioning: Ironic sets
	// maintenance and deletes the node; direct has nothing to delete. No
	// BMC command may be sent.
	Detach(ctx context.Context, h Host) (Result, error)
	// Delete removes the host from the back end (after deprovisioning or
	// power-off, or straight away for a detached host).
	Delete(ctx context.Context, h Host) (Result, error)
	// SetMaintenance turns the back end's maintenance flag on or off (drain
	// maintenance); no power change.
	SetMaintenance(ctx context.Context, h Host, on bool) (Result, error)
	// SetPower powers the host on or off.
	SetPower(ctx context.Context, h Host, on bool) (Result, error)
	// PowerState reads the power state (read-only, not guarded).
	PowerState(ctx context.Context, h Host) (Result, error)
	// SoftPowerOff asks the host's OS to shut down (Redfish
	// GracefulShutdown, IPMI soft off, Ironic "soft power off"): PoweredOn
	// false once it is off, InProgress while it shuts down (call it again
	// to poll; it does not ask again while a shutdown is under way). The
	// caller powers off hard (SetPower false) when it takes too long.
	SoftPowerOff(ctx context.Context, h Host) (Result, error)
}

// DayTwoSpec is the day-two part of a host's spec (wire.Host's bios, raid
// and firmware) handed to a Servicer. Nil or empty parts are left as they
// are.
type DayTwoSpec struct {
	BIOS     *wire.BIOSSpec
	RAID     *wire.RAIDSpec
	Firmware []wire.FirmwareComponent
}

// Empty: nothing to apply.
func (s DayTwoSpec) Empty() bool {
	b := s.BIOS
	noBIOS := b == nil || (b.SimultaneousMultithreadingEnabled == nil && b.SRIOVEnabled == nil &&
		b.VirtualizationEnabled == nil && len(b.Settings) == 0)
	noRAID := s.RAID == nil || (len(s.RAID.HardwareRAIDVolumes) == 0 && len(s.RAID.SoftwareRAIDVolumes) == 0)
	return noBIOS && noRAID && len(s.Firmware) == 0
}

// Servicer is implemented by a provisioner whose back end applies BIOS
// settings, RAID and firmware itself (Ironic: manual clean steps), so the
// agent hands it the spec instead of driving the BMC's day-two resources
// directly. Service is idempotent and bounded like every other method:
// it reads the back end's state and moves it one stretch further,
// InProgress while the back end works (call it again), nil error once
// the host is at spec, an error carrying the back end's message when it
// failed (errclass.ErrUnsupported for what the back end cannot do, named).
type Servicer interface {
	Service(ctx context.Context, h Host, spec DayTwoSpec) (Result, error)
}
