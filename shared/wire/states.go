package wire

// Provisioning states (docs/hoststate.md is the state machine).
const (
	StateNone        = ""
	StateUnmanaged   = "unmanaged"
	StateRegistering = "registering"
	StateInspecting  = "inspecting"
	// StatePreparing: a registered host whose RAID volumes, BIOS settings
	// and firmware are brought to its spec before it is available
	// (metal3's preparing); it returns to available.
	StatePreparing             = "preparing"
	StateAvailable             = "available"
	StateProvisioning          = "provisioning"
	StateProvisioned           = "provisioned"
	StateExternallyProvisioned = "externally-provisioned"
	// StateServicing: an available or provisioned host whose firmware is
	// being updated (metal3's servicing); it returns to the state it came
	// from.
	StateServicing               = "servicing"
	StateDeprovisioning          = "deprovisioning"
	StatePoweringOffBeforeDelete = "powering-off-before-delete"
	StateDeleting                = "deleting"
)

// ProvisioningStates lists every provisioning state, in lifecycle order.
var ProvisioningStates = []string{
	StateUnmanaged, StateRegistering, StateInspecting, StatePreparing, StateAvailable,
	StateProvisioning, StateProvisioned, StateExternallyProvisioned,
	StateServicing, StateDeprovisioning, StatePoweringOffBeforeDelete, StateDeleting,
}

// Operational statuses.
const (
	OpOK              = "ok"
	OpDiscovered      = "discovered"
	OpError           = "error"
	OpDelayed         = "delayed"
	OpDetached        = "detached"
	OpMaintenance     = "maintenance"
	OpRemoving        = "removing"
	OpAwaitingHandoff = "awaiting-handoff"
)

// Error types: the error state a failed action leaves a host in, named as
// metal3 names them (seed 001).
const (
	ErrRegistration            = "registration error"
	ErrInspection              = "inspection error"
	ErrProvisioning            = "provisioning error"
	ErrDeprovisioning          = "deprovisioning error"
	ErrPowerManagement         = "power management error"
	ErrDetach                  = "detach error"
	ErrProvisionedRegistration = "provisioned registration error"
	// ErrServicing: a firmware update failed (metal3's servicing error).
	ErrServicing = "servicing error"
	// ErrPreparation: building RAID, applying BIOS settings or updating
	// firmware before the host is available failed (metal3's spelling).
	ErrPreparation = "preparation error"
)

// Intent kinds.
const (
	IntentDetach = "detach"
	IntentDrain  = "drain"
	IntentResume = "resume"
	// Operation intents: IntentReboot and IntentInspect are one-shot,
	// IntentPowerOff is the power-off hold a reboot with powerOff: true
	// sets, kept until its requester releases it.
	IntentReboot   = "reboot"
	IntentInspect  = "inspect"
	IntentPowerOff = "powerOff"
	// IntentService is a one-shot servicing of a provisioned host
	// (BIOS settings and firmware to the spec, once).
	IntentService = "service"
)

// Reboot modes.
const (
	RebootHard = "hard"
	RebootSoft = "soft"
)

// DefaultRequester names the holder of a power-off request that names none.
const DefaultRequester = "default"

// Drain modes.
const (
	DrainRemoval     = "removal"
	DrainMaintenance = "maintenance"
)

// Roles, weakest first; agent is scoped to one rack.
const (
	RoleViewer   = "viewer"
	RoleOperator = "operator"
	RoleAdmin    = "admin"
	RoleAgent    = "agent"
)

// Event types.
const (
	EventNormal  = "Normal"
	EventWarning = "Warning"
)
