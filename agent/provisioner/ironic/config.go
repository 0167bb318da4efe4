package ironic

import (
	"context"
	"log/slog"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
)

// Config configures the Ironic provisioner.
type Config struct {
	// URL is Ironic's API endpoint, e.g. http://127.0.0.1:6385 (with or
	// without the /v1 suffix). Required.
	URL string
	// Token is sent as X-Auth-Token when not empty (Keystone or a static
	// token in front of Ironic); empty means Ironic runs with noauth. Never
	// logged.
	Token string
	// Guard is the one path to every mutating Ironic call. Required.
	Guard *guard.Guard
	// Timeout bounds each single read-only Ironic API call (and the HTTP
	// client's every request). Default 30s.
	Timeout time.Duration
	// MutationTimeout bounds each mutating Ironic call, and is the room the
	// guard demands on the lease before letting it start. Default
	// fence.DefaultMutationTimeout (4.5s, which fits the default 10s lease
	// anywhere in its renewal cycle); with a shorter lease TTL use
	// fence.MutationTimeout(ttl).
	MutationTimeout time.Duration
	// WaitTimeout bounds how long one method waits for Ironic to reach the
	// target state before it returns Result.InProgress (call it again later).
	// Default 5m.
	WaitTimeout time.Duration
	// PollInterval is the longest pause between two reads of the node while
	// waiting (the first read comes after 50ms, the pause doubling up to
	// this). Default 500ms.
	PollInterval time.Duration
	// SoftPowerOffTimeout is the timeout sent with "soft power off" (the
	// agent's --soft-power-off-timeout, so Ironic gives up when the agent
	// falls back to a hard power-off). 0: Ironic's conductor default.
	SoftPowerOffTimeout time.Duration
	// Logger receives structured logs; default slog.Default().
	Logger *slog.Logger
	// Inventory reads hardware details from the host's BMC; used by Inspect
	// when the node's inspect interface cannot inspect (no-inspect) or
	// inspection found nothing. Optional: without it such hosts get the
	// details Ironic's node properties hold.
	Inventory func(ctx context.Context, h provisioner.Host) (*wire.HardwareDetails, error)
	// BMCDetails reads what the host's BMC is (read-only) when Register
	// has had Ironic verify it, so the host's status says what the BMC is
	// and where its virtual media lives, as with the direct provisioner.
	// Optional; a failure only leaves the details out (Ironic verified the
	// BMC already). Not called with Driver set (Ironic then talks to no
	// BMC, and neither should this). Each call is bounded by Timeout.
	BMCDetails func(ctx context.Context, h provisioner.Host) (*wire.BMCDetails, error)
	// Driver overrides the hardware type chosen from the BMC address
	// (redfish:// → "redfish", ipmi:// → "ipmi"). "fake-hardware" is for
	// tests and labs: Ironic then talks to no BMC at all. Default "".
	Driver string
	// Interfaces sets node interfaces at creation, keyed by Ironic's field
	// name without the suffix ("boot", "deploy", "inspect", "management",
	// "power", ...). Unset ones take Ironic's defaults for the hardware type.
	Interfaces map[string]string
	// ResourceClass is set on created nodes when not empty.
	ResourceClass string
	// RedfishInspect is the inspect interface of nodes created with the
	// redfish hardware type. "" (default): "redfish" when Ironic enables
	// it for that hardware type (New reads GET /v1/drivers/redfish),
	// otherwise Ironic's default. "redfish": Ironic reads the
	// ComputerSystem through its Redfish client (sushy) and writes only
	// the node properties cpus (the processors' TotalThreads summed,
	// whatever their ProcessorType or state), cpu_arch, memory_mb
	// (MemorySummary), local_gb (the smallest disk or volume of 4 GiB or
	// more, minus 1 GiB) and a boot_mode capability, and creates a port
	// for each enabled EthernetInterface; it stores no inventory (no
	// vendor, model, serial, disk or NIC list), and it fails the
	// inspection when one of the four properties cannot be read (e.g. a
	// ProcessorArchitecture Ironic does not map). rackfence maps those
	// properties and the node's ports. "no-inspect": details come from
	// Inventory (the BMC inventory read through agent/bmc). Any other
	// value is passed to Ironic as it is. Interfaces["inspect"] wins.
	RedfishInspect string
	// RedfishVirtualMedia chooses how Provision deploys a host with the
	// redfish hardware type. "" (default): "on" when Ironic enables boot
	// interface redfish-virtual-media and deploy interface ramdisk for
	// that hardware type, otherwise "off". "on": the node gets
	// boot_interface redfish-virtual-media and deploy_interface ramdisk
	// before its deploy, and instance_info.boot_iso = the host's image
	// URL (a bootable ISO) with ramdisk_image_download_source "http":
	// Ironic hands the URL to the BMC's virtual CD as it is (InsertMedia),
	// sets the boot device to CD and powers on; no agent ramdisk, no
	// callback. "off": Ironic's interfaces, instance_info.image_source.
	// Interfaces["boot"] or Interfaces["deploy"] turn it off.
	RedfishVirtualMedia string
	// RedfishISODownload is the node's
	// instance_info.ramdisk_image_download_source for a virtual media
	// deploy. "http" (default): the BMC reads the host's image URL itself,
	// as with the direct provisioner; Ironic checks nothing about it.
	// "local": the conductor downloads the ISO into its [deploy] http_root
	// and gives the BMC [deploy] http_url/redfish/boot-NODE.iso instead
	// (for BMCs that reach the conductor but not the image server; needs
	// an HTTP server publishing http_root, and a download per deploy).
	RedfishISODownload string
	// DeployKernel and DeployRamdisk (or DeployISO) are the URLs of
	// Ironic's agent ramdisk (IPA), written into a node's driver_info
	// when Service needs them and the node has none. Ironic 21.4 runs its
	// redfish BIOS, RAID and firmware clean steps only with that ramdisk
	// booted on the host (each step declares requires_ramdisk), so
	// without them Service refuses day-two work by name before changing
	// anything. Optional.
	DeployKernel, DeployRamdisk, DeployISO string
	// ServiceTimeout bounds one day-two clean through Ironic, from its
	// start (recorded in node.extra): past it Service reports the host
	// failed with the step Ironic is still in. 0: the firmware
	// components' timeouts summed (wire.FirmwareComponent.Timeout) plus
	// 30 minutes for BIOS and RAID.
	ServiceTimeout time.Duration
	// NamedBIOS maps the spec's named BIOS switches
	// (simultaneousMultithreadingEnabled, sriovEnabled,
	// virtualizationEnabled) to the vendor's attributes (agent/bmc's
	// NamedBIOSAttributes); the vendor is what Ironic cached in the
	// node's properties.vendor. Optional: without it only bios.settings
	// by attribute name go through Ironic.
	NamedBIOS func(vendor string, on map[string]bool) (map[string]string, error)
	// FirmwarePending reads the host's BMC firmware inventory
	// (read-only) and returns the components of fw not at their version.
	// Service skips components already there and, once Ironic's clean
	// ended, reports the host done only when none is left: done is the
	// inventory, not Ironic's word. Optional: without it Ironic's word is
	// taken and the message says so.
	FirmwarePending func(ctx context.Context, h provisioner.Host, fw []wire.FirmwareComponent) ([]wire.FirmwareComponent, error)
}

const (
	defaultTimeout      = 30 * time.Second
	defaultWaitTimeout  = 5 * time.Minute
	defaultPollInterval = 500 * time.Millisecond
)

func (c *Config) setDefaults() {
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	if c.MutationTimeout <= 0 {
		c.MutationTimeout = fence.DefaultMutationTimeout
	}
	if c.WaitTimeout <= 0 {
		c.WaitTimeout = defaultWaitTimeout
	}
	if c.RedfishISODownload == "" {
		c.RedfishISODownload = "http"
	}
	if c.PollInterval <= 0 {
		c.PollInterval = defaultPollInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}
