package bmc

import (
	"context"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
)

// DayTwo is what the host state machine drives to keep a host at its
// baseline once it is in service: BIOS at a profile, firmware at a
// version, RAID built and disks erased (Redfish only; over IPMI every
// method answers errclass.ErrUnsupported). *Conn implements it. Read-only methods
// take no guard; every mutation runs inside guard.Guard.Do. Long work
// (a flash, an erase, a volume built by a job) runs on the BMC as a task:
// a mutation only starts it and returns where to follow it; WaitTask and
// FinishUpdate follow it, bounded by the caller's timeout, and never act
// on the host.
type DayTwo interface {
	// BIOS reads the system's current attributes, where pending settings
	// go (SettingsObject, SupportedApplyTimes), the pending values and the
	// outcome of the last apply (@Redfish.Settings.Messages).
	BIOS(ctx context.Context) (*BIOSSettings, error)
	// BIOSRegistry reads the attribute registry the Bios resource names,
	// through the Registries collection (cached per Conn by name).
	BIOSRegistry(ctx context.Context) (BIOSRegistry, error)
	// ApplyBIOS validates desired against the registry (nothing sent when
	// any is wrong), then PATCHes the attributes that differ into the
	// settings object (with @Redfish.SettingsApplyTime OnReset where the
	// BMC offers apply times) and reads the pending values back. The
	// values take at the system's next reset, which is the caller's to do.
	ApplyBIOS(ctx context.Context, g *guard.Guard, host string, desired map[string]string) (*BIOSApply, error)
	// BIOSResult reads, after that reset, whether each desired attribute
	// took; those that did not come with the BMC's message. Error
	// (errclass.ErrFailed) when any did not.
	BIOSResult(ctx context.Context, desired map[string]string) (*BIOSResult, error)
	// BIOSNames maps the named settings (SettingSMT, SettingSRIOV,
	// SettingVirtualization) to this BMC vendor's attributes and values.
	BIOSNames(ctx context.Context, named map[string]bool) (map[string]string, error)

	// FirmwareInventory lists UpdateService.FirmwareInventory.
	FirmwareInventory(ctx context.Context) ([]FirmwareItem, error)
	// StartUpdate starts a flash of one inventory item from an image
	// (SimpleUpdate with ImageURI, else the multipart push) and returns
	// the task to follow. A BMC already flashing refuses:
	// ErrUpdateInProgress.
	StartUpdate(ctx context.Context, g *guard.Guard, host string, req UpdateRequest) (*Update, error)
	// FinishUpdate follows an update's task for at most timeout and then
	// checks the inventory: done only when the item shows the expected
	// version (or, with none given, a version other than before).
	FinishUpdate(ctx context.Context, u *Update, timeout time.Duration) (*FirmwareItem, error)

	// Task reads a task or a task monitor once.
	Task(ctx context.Context, uri string) (*TaskStatus, error)
	// WaitTask polls a task until it ends or timeout passes
	// (ErrTaskRunning); unreachable BMCs and 5xx answers meanwhile are
	// waited through.
	WaitTask(ctx context.Context, uri string, timeout time.Duration) (*TaskStatus, error)

	// Storage lists the system's storage controllers with their drives
	// and volumes.
	Storage(ctx context.Context) ([]StorageController, error)
	// CreateVolume builds a volume (POST to the controller's Volumes).
	CreateVolume(ctx context.Context, g *guard.Guard, host string, req VolumeRequest) (*StorageOp, error)
	// DeleteVolume deletes a volume (by Id or URI).
	DeleteVolume(ctx context.Context, g *guard.Guard, host, volume string) (*StorageOp, error)
	// Erase erases a drive or a volume (by Id or URI): Drive.SecureErase,
	// else Volume.Initialize, whichever the BMC offers; StorageOp.Method
	// says which.
	Erase(ctx context.Context, g *guard.Guard, host, target string) (*StorageOp, error)
}

var _ DayTwo = (*Conn)(nil)

// DefaultTaskPollInterval is how often WaitTask reads a task when
// Options.TaskPollInterval is zero.
const DefaultTaskPollInterval = 10 * time.Second
