// Package wire holds the wire types of rackfence's HTTP API v1. Every binary
// (coordinator, agent, ctl) speaks these; nothing here does I/O.
//
// JSON field names are part of the public contract (docs/api.md): add
// fields freely, never rename or remove one.
package wire

import (
	"net/url"
	"strings"
	"time"
)

// Host is one bare-metal host: the operator's spec plus, on reads, the
// coordinator's bookkeeping, the agent's last reported status and the
// operator's intents. PUT ignores Status, Intents and the index fields, so the
// output of a GET can be applied back unchanged.
type Host struct {
	Name                  string `json:"name"`
	Rack                  string `json:"rack"`
	BMC                   BMC    `json:"bmc"`
	BootMACAddress        string `json:"bootMACAddress,omitempty"`
	Online                bool   `json:"online"`
	ExternallyProvisioned bool   `json:"externallyProvisioned,omitempty"`
	Image                 *Image `json:"image,omitempty"`
	// RootDeviceHints choose the disk the image is written to (Ironic
	// properties.root_device); the direct provisioner writes no disk and
	// only records them.
	RootDeviceHints *RootDeviceHints `json:"rootDeviceHints,omitempty"`
	// BootMode is UEFI (the default when empty), UEFISecureBoot or legacy.
	BootMode string `json:"bootMode,omitempty"`
	// BootMethod is how the direct provisioner boots the image: vmedia
	// (the BMC's virtual CD), pxe (a one-time network boot, served by
	// the site's PXE) or uefihttp (a one-time UEFI HTTP boot from the
	// image's URL); empty: virtual media when the BMC has a device taking
	// CD or DVD, else UEFI HTTP where the system offers HttpBootUri, else
	// PXE.
	BootMethod string `json:"bootMethod,omitempty"`
	// AutomatedCleaningMode is metadata (the default when empty: Ironic
	// cleans the disks) or disabled (Ironic's per-node automated_clean);
	// the direct provisioner never cleans.
	AutomatedCleaningMode string `json:"automatedCleaningMode,omitempty"`
	// UserData, NetworkData and MetaData name credentials records whose
	// data map holds the config drive's content (key userData, networkData,
	// metaData, or a lone key "value"); PreprovisioningNetworkData is the
	// network configuration of the deploy ramdisk. Absent: no config drive.
	// The content is never part of the host: a GET shows only the names.
	UserData                   *SecretReference `json:"userData,omitempty"`
	NetworkData                *SecretReference `json:"networkData,omitempty"`
	MetaData                   *SecretReference `json:"metaData,omitempty"`
	PreprovisioningNetworkData *SecretReference `json:"preprovisioningNetworkData,omitempty"`
	// Consumer names who uses the host; a drain waits for it to be empty.
	Consumer string `json:"consumer"`
	// Labels are the operator's key/value tags (Kubernetes syntax and
	// rules, see labels.go); list and bulk commands select hosts by them
	// (GET /v1/hosts?selector=role=compute,zone!=a). The agent ignores
	// them: changing only labels is not a spec change (specIndex stays).
	Labels map[string]string `json:"labels,omitempty"`

	// Day-two spec (daytwo.go): BIOS settings, firmware updates, RAID
	// layout, and when a provisioned host may change them. Stored and
	// validated; a change of any is a spec change (specIndex moves).
	BIOS         *BIOSSpec           `json:"bios,omitempty"`
	Firmware     []FirmwareComponent `json:"firmware,omitempty"`
	RAID         *RAIDSpec           `json:"raid,omitempty"`
	UpdatePolicy *UpdatePolicy       `json:"updatePolicy,omitempty"`

	// Handoff is set on a host pivoted in from another tier. Until the
	// source tier confirms the detach, the host is awaiting-handoff and no
	// agent may touch it.
	Handoff *Handoff `json:"handoff,omitempty"`

	// Read-only fields (ignored by PUT).
	Status  *HostStatus `json:"status,omitempty"`
	Intents *Intents    `json:"intents,omitempty"`
	// Task is the long BMC task running on the host, as the rack's lease
	// holder recorded it (bmctask.go); nil when none runs. Not part of
	// the status: an agent's report does not replace it, and a
	// status-less watch carries it.
	Task *BMCTask `json:"task,omitempty"`
	// CreatedIndex is the index the host record was created at, kept for
	// the record's life: a host deleted and created again under the same
	// name has a new one (the rack agent tells them apart by it).
	CreatedIndex      uint64 `json:"createdIndex,omitempty"`
	ModifiedIndex     uint64 `json:"modifiedIndex,omitempty"`
	SpecIndex         uint64 `json:"specIndex,omitempty"`
	DeletionRequested bool   `json:"deletionRequested,omitempty"`
	// PivotedTo names the tier this host was handed to; it stays detached here.
	PivotedTo string `json:"pivotedTo,omitempty"`
}

// BMC says how to reach a host's baseboard management controller.
// Address schemes: redfish:// (HTTPS), redfish+http://, ipmi://host:port.
type BMC struct {
	Address string `json:"address,omitempty"`
	// Credentials names a credentials record (PUT /v1/credentials/{name}).
	Credentials string `json:"credentials,omitempty"`
	// DisableCertificateVerification skips TLS verification for redfish://.
	DisableCertificateVerification bool `json:"disableCertificateVerification,omitempty"`
}

// Image is what provisioning writes to the host.
type Image struct {
	URL string `json:"url"`
	// Checksum is HEX (its algorithm given by ChecksumType), ALGO:HEX
	// (md5:, sha256:, sha512:), or the http(s) URL of a checksum file
	// holding the digest of the image's file name (metal3's form).
	Checksum string `json:"checksum,omitempty"`
	// ChecksumType is md5, sha256, sha512 or auto (the default when
	// empty: the ALGO: prefix, else the length of the hex digest).
	ChecksumType string `json:"checksumType,omitempty"`
	// Format is raw, qcow2, vdi, vmdk or live-iso; empty: live-iso for a
	// URL ending in .iso, otherwise what Ironic detects.
	Format string `json:"format,omitempty"`
}

// Image checksum types and formats (metal3 BareMetalHost names).
const (
	ChecksumMD5    = "md5"
	ChecksumSHA256 = "sha256"
	ChecksumSHA512 = "sha512"
	ChecksumAuto   = "auto"

	FormatRaw     = "raw"
	FormatQCOW2   = "qcow2"
	FormatVDI     = "vdi"
	FormatVMDK    = "vmdk"
	FormatLiveISO = "live-iso"
)

// ImageChecksumTypes and ImageFormats are the accepted values, in the
// order error messages list them.
var (
	ImageChecksumTypes = []string{ChecksumMD5, ChecksumSHA256, ChecksumSHA512, ChecksumAuto}
	ImageFormats       = []string{FormatRaw, FormatQCOW2, FormatVDI, FormatVMDK, FormatLiveISO}
)

// Boot modes and automated cleaning modes.
const (
	BootModeUEFI       = "UEFI"
	BootModeUEFISecure = "UEFISecureBoot"
	BootModeLegacy     = "legacy"

	CleaningMetadata = "metadata"
	CleaningDisabled = "disabled"
)

// Boot methods (Host.BootMethod).
const (
	BootMethodVirtualMedia = "vmedia"
	BootMethodPXE          = "pxe"
	BootMethodUEFIHTTP     = "uefihttp"
)

// BootModes, BootMethods and CleaningModes are the accepted values ("" is
// the first).
var (
	BootModes     = []string{BootModeUEFI, BootModeUEFISecure, BootModeLegacy}
	BootMethods   = []string{BootMethodVirtualMedia, BootMethodPXE, BootMethodUEFIHTTP}
	CleaningModes = []string{CleaningMetadata, CleaningDisabled}
)

// RootDeviceHints select the root disk (metal3 names; Ironic's
// root_device keys in brackets). Every hint given must match.
type RootDeviceHints struct {
	DeviceName         string `json:"deviceName,omitempty"`         // name: /dev/sda or /dev/disk/by-path/…
	HCTL               string `json:"hctl,omitempty"`               // hctl: Host:Channel:Target:Lun
	Model              string `json:"model,omitempty"`              // model
	Vendor             string `json:"vendor,omitempty"`             // vendor
	SerialNumber       string `json:"serialNumber,omitempty"`       // serial
	MinSizeGigabytes   int    `json:"minSizeGigabytes,omitempty"`   // size: ">= N"
	WWN                string `json:"wwn,omitempty"`                // wwn
	WWNWithExtension   string `json:"wwnWithExtension,omitempty"`   // wwn_with_extension
	WWNVendorExtension string `json:"wwnVendorExtension,omitempty"` // wwn_vendor_extension
	Rotational         *bool  `json:"rotational,omitempty"`         // rotational
}

// EffectiveFormat is the image's format, live-iso for no format and a URL
// whose path ends in .iso, "" when unknown (Ironic detects it).
func (i *Image) EffectiveFormat() string {
	if i == nil {
		return ""
	}
	if i.Format != "" {
		return i.Format
	}
	p := i.URL
	if u, err := url.Parse(i.URL); err == nil {
		p = u.Path
	}
	if strings.HasSuffix(strings.ToLower(p), ".iso") {
		return FormatLiveISO
	}
	return ""
}

// ChecksumAlgo returns the checksum's algorithm (md5, sha256, sha512) and
// hex digest: from checksumType, else the ALGO: prefix, else the digest's
// length (32, 64 or 128 hex digits). "" algo when there is no checksum or
// it cannot be told.
func (i *Image) ChecksumAlgo() (algo, hex string) {
	if i == nil || i.Checksum == "" || i.ChecksumURL() != "" {
		return "", ""
	}
	hex = i.Checksum
	if a, h, ok := strings.Cut(i.Checksum, ":"); ok {
		algo, hex = a, h
	}
	if t := i.ChecksumType; t != "" && t != ChecksumAuto {
		return t, hex
	}
	if algo != "" {
		return algo, hex
	}
	switch len(hex) {
	case 32:
		return ChecksumMD5, hex
	case 64:
		return ChecksumSHA256, hex
	case 128:
		return ChecksumSHA512, hex
	}
	return "", hex
}

// ChecksumURL returns the checksum when it is the http(s) URL of a
// checksum file, else "".
func (i *Image) ChecksumURL() string {
	if i == nil {
		return ""
	}
	l := strings.ToLower(i.Checksum)
	if strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		return i.Checksum
	}
	return ""
}

// Handoff records where a pivoted host came from.
type Handoff struct {
	SourceTier      string `json:"sourceTier"`
	SourceClusterID string `json:"sourceClusterID"`
	// DetachIndex is the source's createdIndex of the detach intent.
	DetachIndex uint64 `json:"detachIndex"`
	// Confirmed is set by the destination coordinator once the source
	// confirmed the detach; agents act on the host only after that.
	Confirmed bool `json:"confirmed,omitempty"`
}

// HostStatus is what the rack agent last reported.
type HostStatus struct {
	ProvisioningState string `json:"provisioningState"`
	OperationalStatus string `json:"operationalStatus"`
	ErrorType         string `json:"errorType,omitempty"`
	ErrorMessage      string `json:"errorMessage,omitempty"`
	ErrorCount        int    `json:"errorCount"`
	PoweredOn         bool   `json:"poweredOn"`
	// PowerState is the power as the host's BMC last read it: PowerOn,
	// PowerOff, or PowerUnknown (never reached, or a BMC reporting no
	// power state: PoweredOn is then what the agent last asked for). ""
	// from an agent predating it: PoweredOn alone.
	PowerState      string           `json:"powerState,omitempty"`
	ProvisioningID  string           `json:"provisioningID,omitempty"`
	HardwareDetails *HardwareDetails `json:"hardwareDetails,omitempty"`
	// BMCDetails is what the agent learnt about the host's BMC when it
	// registered it (what it is, how it logs in, where virtual media lives
	// and how it is driven); nil before registration.
	BMCDetails *BMCDetails `json:"bmcDetails,omitempty"`
	// ConfigDrive is the config drive the host was last provisioned with
	// (direct provisioner): the artifact server serving it, its size,
	// when the agent published it and when the BMC read it. Never its own
	// URL. nil: no config drive, or an agent predating the field.
	ConfigDrive *ConfigDriveStatus `json:"configDrive,omitempty"`
	LastUpdated time.Time          `json:"lastUpdated"`
	// OperationHistory is when the host's last register, inspect,
	// provision and deprovision started and ended (metal3 BareMetalHost's
	// operationHistory); nil before the first of them started.
	OperationHistory *OperationHistory `json:"operationHistory,omitempty"`
	// Epoch of the lease under which the agent reported this status.
	Epoch uint64 `json:"epoch"`
	// Extra is state-machine bookkeeping that must survive an agent restart
	// (for example the spec index it last acted on, retry counters). Keys are
	// owned by agent/hoststate.
	Extra map[string]string `json:"extra,omitempty"`
	// Health is the host's hardware health as its BMC last reported it
	// (health.go), read at the status refresh; nil before the first read,
	// for a BMC that reports none (IPMI, Ironic), or from an agent or
	// coordinator predating it.
	Health *HardwareHealth `json:"health,omitempty"`
	// DayTwo is the host's BIOS, firmware and RAID state as the agent
	// found it (daytwo.go). Reserved: not accepted in reports yet.
	DayTwo *DayTwoStatus `json:"dayTwo,omitempty"`
}

// ConfigDriveStatus is a config drive as the agent's artifact server saw
// it.
type ConfigDriveStatus struct {
	// Server is the base URL of the artifact server the BMC reads the
	// drive from (rackfence-agent --artifact-url), never the drive's own
	// URL: its path is a capability to the host's user data. "" from an
	// agent or coordinator predating it.
	Server string `json:"server,omitempty"`
	// Size is the drive's size in bytes.
	Size int64 `json:"size"`
	// PublishedAt is when the agent started serving it.
	PublishedAt time.Time `json:"publishedAt"`
	// ReadAt is when the BMC first read it (an answer sent in full);
	// zero while it has not.
	ReadAt time.Time `json:"readAt,omitzero"`
}

// HostStatus.PowerState values.
const (
	PowerOn      = "on"
	PowerOff     = "off"
	PowerUnknown = "unknown"
)

// PowerStates are the valid HostStatus.PowerState values ("" too, from an
// agent predating the field).
var PowerStates = []string{PowerOn, PowerOff, PowerUnknown}

// OperationHistory holds one OperationMetric per operation, set by the
// agent's state machine from its clock: Start when the host enters the
// operation's provisioning state (registering, inspecting, provisioning,
// deprovisioning), End when it leaves that state because the operation
// succeeded. A new run of the operation restarts its metric (End zero
// again); an operation that failed, or was abandoned (node lost, deletion,
// detach), keeps its Start and no End.
type OperationHistory struct {
	Register    OperationMetric `json:"register,omitzero"`
	Inspect     OperationMetric `json:"inspect,omitzero"`
	Provision   OperationMetric `json:"provision,omitzero"`
	Deprovision OperationMetric `json:"deprovision,omitzero"`
}

// OperationMetric is when one operation started and ended (RFC 3339).
// Start zero: never run; End zero with Start set: running, or it never
// finished (the host is no longer in the operation's state).
type OperationMetric struct {
	Start time.Time `json:"start,omitzero"`
	End   time.Time `json:"end,omitzero"`
}

// Duration is End - Start, or 0 while the operation has not ended.
func (m OperationMetric) Duration() time.Duration {
	if m.Start.IsZero() || m.End.IsZero() {
		return 0
	}
	return m.End.Sub(m.Start)
}

// Operations of an OperationHistory, in lifecycle order (the label values
// of the agent's rackfence_agent_operation_duration_seconds).
const (
	OperationRegister    = "register"
	OperationInspect     = "inspect"
	OperationProvision   = "provision"
	OperationDeprovision = "deprovision"
)

// Operations lists the operations in lifecycle order.
var Operations = []string{OperationRegister, OperationInspect, OperationProvision, OperationDeprovision}

// Metric returns the metric of operation op (one of Operations), nil for
// an unknown name.
func (h *OperationHistory) Metric(op string) *OperationMetric {
	switch op {
	case OperationRegister:
		return &h.Register
	case OperationInspect:
		return &h.Inspect
	case OperationProvision:
		return &h.Provision
	case OperationDeprovision:
		return &h.Deprovision
	}
	return nil
}

// HardwareDetails is the inventory read during inspection.
type HardwareDetails struct {
	Manufacturer string     `json:"manufacturer,omitempty"`
	Model        string     `json:"model,omitempty"`
	SerialNumber string     `json:"serialNumber,omitempty"`
	BIOSVersion  string     `json:"biosVersion,omitempty"`
	CPUs         []CPU      `json:"cpus,omitempty"`
	MemoryMiB    int        `json:"memoryMiB,omitempty"`
	NICs         []NIC      `json:"nics,omitempty"`
	Disks        []Disk     `json:"disks,omitempty"`
	Firmware     []Firmware `json:"firmware,omitempty"`
	// SystemUUID is the system's UUID as the BMC reports it (Redfish
	// ComputerSystem.UUID).
	SystemUUID string `json:"systemUUID,omitempty"`
	// Accelerators are the processors that are not CPUs (Redfish
	// ProcessorType GPU, FPGA, Accelerator, DSP, …); never counted in CPUs.
	Accelerators []Accelerator `json:"accelerators,omitempty"`
}

// Accelerator is one non-CPU processor (GPU, FPGA, …).
type Accelerator struct {
	Name  string `json:"name,omitempty"`
	Type  string `json:"type,omitempty"` // Redfish ProcessorType: GPU, FPGA, Accelerator, DSP, Core, Thread, OEM
	Model string `json:"model,omitempty"`
}

// BMCDetails is what registration learnt about a host's BMC, so an operator
// sees at once why a host can or cannot be provisioned.
type BMCDetails struct {
	// Protocol is "redfish" or "ipmi".
	Protocol string `json:"protocol"`
	// RedfishVersion is the service root's RedfishVersion.
	RedfishVersion string `json:"redfishVersion,omitempty"`
	// Vendor and Model are the BMC's (service root Vendor or the manager's
	// Manufacturer; the manager's Model).
	Vendor string `json:"vendor,omitempty"`
	Model  string `json:"model,omitempty"`
	// FirmwareVersion is the manager's FirmwareVersion.
	FirmwareVersion string `json:"firmwareVersion,omitempty"`
	// Auth is the authentication that worked: "session" (Redfish
	// SessionService), "basic" (HTTP Basic) or "ipmi".
	Auth string `json:"auth,omitempty"`
	// System is the Redfish ComputerSystem this host is
	// (/redfish/v1/Systems/…).
	System string `json:"system,omitempty"`
	// Manager is the Redfish Manager that manages the system.
	Manager string `json:"manager,omitempty"`
	// VirtualMedia is the device an image is inserted in (a VirtualMedia
	// resource taking CD or DVD), "" when the BMC has none.
	VirtualMedia string `json:"virtualMedia,omitempty"`
	// VirtualMediaMethod is how that device is driven: "actions"
	// (InsertMedia/EjectMedia) or "patch" (PATCH of Image and Inserted).
	VirtualMediaMethod string `json:"virtualMediaMethod,omitempty"`
	// BootModes are the boot modes the system offers (UEFI, Legacy).
	BootModes []string `json:"bootModes,omitempty"`
	// Problems says what the BMC lacks for rackfence's operations (for
	// example no virtual media device taking CD or DVD); empty when none.
	Problems []string `json:"problems,omitempty"`
}

// CPU is one processor socket.
type CPU struct {
	Model   string `json:"model,omitempty"`
	Cores   int    `json:"cores,omitempty"`
	Threads int    `json:"threads,omitempty"`
}

// NIC is one network interface.
type NIC struct {
	Name      string `json:"name,omitempty"`
	MAC       string `json:"mac,omitempty"`
	SpeedMbps int    `json:"speedMbps,omitempty"`
}

// Disk is one storage device.
type Disk struct {
	Name      string `json:"name,omitempty"`
	Model     string `json:"model,omitempty"`
	SizeBytes int64  `json:"sizeBytes,omitempty"`
	Type      string `json:"type,omitempty"`
}

// Firmware is one firmware component and its version.
type Firmware struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// Intents are the operator's standing requests for a host.
type Intents struct {
	Detach *Intent `json:"detach,omitempty"`
	Drain  *Intent `json:"drain,omitempty"`
	Resume *Intent `json:"resume,omitempty"`
	// Reboot is a one-shot reboot (mode hard or soft): the agent powers
	// the host off and on again once, then drops the intent.
	Reboot *Intent `json:"reboot,omitempty"`
	// Inspect is a one-shot re-inspection of an available host: the agent
	// reads the hardware again, then drops the intent.
	Inspect *Intent `json:"inspect,omitempty"`
	// Service is a one-shot servicing of a provisioned host: the agent
	// brings its BIOS settings and firmware to spec.bios and
	// spec.firmware once (no update policy needed), then drops the
	// intent. Plan says what it costs (the power cycles).
	Service *Intent `json:"service,omitempty"`
	// PowerOff holds the host powered off, one entry per requester
	// (metal3's reboot.metal3.io/KEY): it powers on again only when no
	// requester is left. Acknowledged once the host is off.
	PowerOff map[string]*Intent `json:"powerOff,omitempty"`
	// RotateCredentials is an operator's request to rotate the tier's BMC
	// account on the host (bmcaccount.go): the rack's lease holder rotates
	// at its next look at the host, and the coordinator drops the request
	// when that rotation is confirmed or the fence at the BMC is found off.
	RotateCredentials *Intent `json:"rotateCredentials,omitempty"`
}

// Intent is one operator request.
type Intent struct {
	Reason       string `json:"reason,omitempty"`
	Actor        string `json:"actor,omitempty"`
	CreatedIndex uint64 `json:"createdIndex"`
	Acknowledged bool   `json:"acknowledged"`
	AckEpoch     uint64 `json:"ackEpoch,omitempty"`
	// Mode is the drain mode: removal or maintenance.
	Mode  string `json:"mode,omitempty"`
	Force bool   `json:"force,omitempty"`
	// Wipe asks a removal drain to deprovision (erase) before removing.
	Wipe bool `json:"wipe,omitempty"`
	// Requester names who holds a power-off intent (its key in
	// Intents.PowerOff) or asked for a reboot.
	Requester string `json:"requester,omitempty"`
	// Plan is what a service intent will do and the power cycles it
	// costs, stated by the coordinator from the host's spec when the
	// intent is taken (ServicePlan).
	Plan *ServicePlan `json:"plan,omitempty"`
}

// RebootRequest is the body of POST /v1/hosts/{name}/intents/reboot.
type RebootRequest struct {
	// Mode is hard (the default: power off at once) or soft (graceful
	// shutdown, hard power-off after the agent's --soft-power-off-timeout).
	Mode string `json:"mode,omitempty"`
	// PowerOff keeps the host off until Requester withdraws
	// (DELETE /v1/hosts/{name}/intents/reboot/{requester}).
	PowerOff bool `json:"powerOff,omitempty"`
	// Requester names the holder of a power-off ("default" when empty).
	Requester string `json:"requester,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// IntentRequest is the body of POST …/intents/{detach,drain,resume}.
type IntentRequest struct {
	Reason string `json:"reason,omitempty"`
	Force  bool   `json:"force,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Wipe   bool   `json:"wipe,omitempty"`
}

// StatusReport is the body of PUT /v1/hosts/{name}/status: one atomic
// write of an agent's view of one host, fenced by its lease epoch.
type StatusReport struct {
	Epoch  uint64     `json:"epoch"`
	Status HostStatus `json:"status"`
	// Acks acknowledges intents, each by kind and createdIndex (so an ack
	// never confirms a newer intent of the same kind).
	Acks []IntentAck `json:"acks,omitempty"`
	// Events to append to the host's event log.
	Events []Event `json:"events,omitempty"`
	// Remove deletes the host record (deletion or removal drain complete).
	Remove bool `json:"remove,omitempty"`
}

// IntentAck acknowledges one intent.
type IntentAck struct {
	Kind         string `json:"kind"`
	CreatedIndex uint64 `json:"createdIndex"`
	// Drop removes the intent once handled (resume is one-shot).
	Drop bool `json:"drop,omitempty"`
}

// Event is one entry of a host's bounded event log.
type Event struct {
	Index   uint64    `json:"index,omitempty"`
	Time    time.Time `json:"time"`
	Type    string    `json:"type"` // Normal or Warning
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Source  string    `json:"source,omitempty"`
}

// Credentials is the body of PUT /v1/credentials/{name}; reads omit the
// password and the data values unless revealed to an agent of a rack that
// uses them.
type Credentials struct {
	Name     string `json:"name,omitempty"`
	Username string `json:"username"`
	Password string `json:"password,omitempty"`
	// Data is sealed key/value content (as a Kubernetes Secret's data):
	// user data, network data, meta data a host's spec names. A record may
	// hold only data (no username). Reads list the keys (DataKeys), never
	// the values, except when revealed to an agent.
	Data map[string]string `json:"data,omitempty"`
	// DataKeys lists Data's keys on reads that do not reveal (sorted).
	DataKeys []string `json:"dataKeys,omitempty"`
}

// SecretReference names a credentials record holding data (BMO's
// SecretReference without a namespace: the tier is the namespace).
type SecretReference struct {
	Name string `json:"name"`
}

// TokenRequest is the body of POST /v1/tokens.
type TokenRequest struct {
	Role string `json:"role"`
	Rack string `json:"rack,omitempty"`
	// TTL is how long the token is valid, a Go duration ("720h"); empty:
	// it never expires.
	TTL string `json:"ttl,omitempty"`
	// Name labels the token in lists and the audit trail (default
	// ROLE[-RACK]-ID).
	Name string `json:"name,omitempty"`
}

// TokenResponse answers POST /v1/tokens. Token is shown this once; the
// cluster keeps only its hash.
type TokenResponse struct {
	ID    string `json:"id"`
	Token string `json:"token"`
	Name  string `json:"name,omitempty"`
	Role  string `json:"role"`
	Rack  string `json:"rack,omitempty"`
	// ExpiresAt is absent for a token that never expires.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// Token is one entry of GET /v1/tokens: never the secret or its hash.
type Token struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Rack      string    `json:"rack,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// LastUsed is the last use the leader recorded, to the minute (it is
	// written every 30 s); absent when never seen.
	LastUsed time.Time `json:"lastUsed,omitzero"`
	Expired  bool      `json:"expired,omitempty"`
}

// AuditRecord is one entry of a member's audit trail (GET /v1/audit): an
// operator action this member carried out or refused. Never a body, never
// a secret.
type AuditRecord struct {
	Time   time.Time `json:"time"`
	Member string    `json:"member"`
	// Actor is the token's name, TokenID its public ID; both empty when
	// the request carried no known token.
	Actor   string `json:"actor,omitempty"`
	TokenID string `json:"tokenID,omitempty"`
	Role    string `json:"role,omitempty"`
	Method  string `json:"method"`
	// Route is the route pattern (/v1/hosts/:name), Target the path
	// parameters (name=r1-h07) or what the request created (a token id).
	Route  string `json:"route"`
	Target string `json:"target,omitempty"`
	Code   int    `json:"code"`
	// Remote is the client's address; Via the member that forwarded it.
	Remote string `json:"remote,omitempty"`
	Via    string `json:"via,omitempty"`
}

// LeaseRequest is the body of POST/PUT/DELETE /v1/racks/{rack}/lease.
type LeaseRequest struct {
	Holder string   `json:"holder"`
	TTL    Duration `json:"ttl,omitempty"`
	// Epoch is required to renew or release.
	Epoch uint64 `json:"epoch,omitempty"`
}

// Lease answers lease calls: who holds the rack, under which epoch.
type Lease struct {
	Rack   string   `json:"rack"`
	Holder string   `json:"holder"`
	Epoch  uint64   `json:"epoch"`
	TTL    Duration `json:"ttl"`
}

// LeaseRecord is one entry of a rack's lease history.
type LeaseRecord struct {
	Epoch     uint64     `json:"epoch"`
	Holder    string     `json:"holder"`
	GrantedAt time.Time  `json:"grantedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	End       string     `json:"end,omitempty"` // released or expired
}

// Rack is one entry of GET /v1/racks.
type Rack struct {
	Name   string   `json:"name"`
	Holder string   `json:"holder"`
	Epoch  uint64   `json:"epoch"`
	TTL    Duration `json:"ttl"`
	Hosts  int      `json:"hosts"`
	// ExpiresIn is the time the leader's expiry clock gives a held lease
	// at the moment of the answer (absent from a follower's answer and
	// for a free rack).
	ExpiresIn *Duration `json:"expiresIn,omitempty"`
	// Counts are the rack's hosts by state and status.
	Counts RackHostCounts `json:"counts"`
}

// ClusterStatus answers GET /v1/status.
type ClusterStatus struct {
	Tier         string   `json:"tier"`
	ClusterID    string   `json:"clusterID"`
	NodeID       string   `json:"nodeID"`
	State        string   `json:"state"`
	Leader       string   `json:"leader"`
	Members      []Member `json:"members"`
	CommitIndex  uint64   `json:"commitIndex"`
	AppliedIndex uint64   `json:"appliedIndex"`
	// RestoreGeneration counts the restores from backups behind this
	// cluster (0: never restored); lease epochs carry it in bits 40-52.
	RestoreGeneration uint64 `json:"restoreGeneration,omitempty"`
	// TLS says how this member's API and Raft transport are secured.
	TLS TLSStatus `json:"tls"`
	// Warnings are conditions an operator should fix (e.g. plaintext,
	// a member whose state hash differs from the leader's).
	Warnings []string `json:"warnings,omitempty"`
	// Upgrade is the version gate's view (upgrade.go), filled by the leader.
	Upgrade *UpgradeStatus `json:"upgrade,omitempty"`
}

// Member is one Raft server.
type Member struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	HTTPAddr string `json:"httpAddr"`
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
	// Version gate (upgrade.go): the member's binary version as the
	// leader last saw it, and why it stopped applying, if it did.
	Version string `json:"version,omitempty"`
	Stopped string `json:"stopped,omitempty"`
}

// JoinRequest is the body of POST /v1/cluster/join.
type JoinRequest struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	HTTPAddr string `json:"httpAddr"`
}

// List is the envelope of every list answer. Index is the Raft index the
// answer reflects: a watch from it sees everything after. Continue, on a
// paged list (list.go), is the token of the next page; absent on the last.
// Every page of one list carries the first page's Index.
type List[T any] struct {
	Items    []T    `json:"items"`
	Index    uint64 `json:"index"`
	Continue string `json:"continue,omitempty"`
}

// WatchResponse answers GET /v1/watch?rack=&index=. Hosts holds the full
// current form of every host of the rack changed after the requested index
// (spec, status or intents); Deleted the names removed since. When the
// requested index is older than the coordinator remembers deletions for,
// Reset is true and Hosts holds every host of the rack: drop all others.
//
// Asked with status=false (ParamStatus), every host comes without its
// status, and StatusOmitted names the hosts of Hosts that have one (in
// Hosts' order): a host in Hosts without status and not named there has
// none yet. A coordinator that predates the parameter ignores it and
// answers whole hosts, StatusOmitted absent.
type WatchResponse struct {
	Index   uint64   `json:"index"`
	Hosts   []Host   `json:"hosts"`
	Deleted []string `json:"deleted,omitempty"`
	Reset   bool     `json:"reset,omitempty"`
	// StatusOmitted: the hosts whose status was left out (status=false).
	StatusOmitted []string `json:"statusOmitted,omitempty"`
	// Lease is the rack's current lease (nil when free).
	Lease *Lease `json:"lease,omitempty"`
}

// ErrorBody is every error answer: {"error": {"code", "message", "field"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names what went wrong and, for bad input, which field.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}
