package hoststate

import (
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// Input is everything one Step looks at. Step reads nothing else: no clock,
// no randomness, no network.
type Input struct {
	// Host is the host as the coordinator last described it: spec, Status
	// (nil for a new host), Intents (may be nil), DeletionRequested and
	// Handoff.
	Host wire.Host
	// Now is the caller's clock; events are stamped with it and backoff
	// deadlines are computed from it.
	Now time.Time
	// Jitter is a number in [0,1) drawn by the caller; it shortens a backoff
	// by up to half (values outside [0,1) are clamped).
	Jitter float64
	// Last is the result of the action the previous Decision asked for; nil
	// when no action ran since.
	Last *Outcome
	// Config holds the tunables; the zero value means the defaults.
	Config Config
}

// Action is the one provisioner call a Decision asks for.
type Action string

// Actions. ActionNone means "run nothing".
const (
	ActionNone           Action = ""
	ActionRegister       Action = "register"
	ActionInspect        Action = "inspect"
	ActionProvide        Action = "provide"
	ActionProvision      Action = "provision"
	ActionDeprovision    Action = "deprovision"
	ActionAdopt          Action = "adopt"
	ActionDetach         Action = "detach"
	ActionDelete         Action = "delete"
	ActionMaintenanceOn  Action = "maintenance-on"
	ActionMaintenanceOff Action = "maintenance-off"
	ActionPowerOn        Action = "power-on"
	ActionPowerOff       Action = "power-off"
	// ActionSoftPowerOff asks the OS to shut down (Redfish
	// GracefulShutdown, IPMI soft, Ironic soft power off); InProgress
	// while it does. After Config.SoftPowerOffTimeout ActionPowerOff
	// follows.
	ActionSoftPowerOff Action = "soft-power-off"
	// ActionReinspect reads the hardware of an available host again, even
	// though it has hardware details (the inspect intent).
	ActionReinspect Action = "reinspect"
	// ActionFirmwareUpdate brings every component of spec.firmware to its
	// version, one BMC task at a time, or follows the task recorded on the
	// host (host.task) to its end: InProgress while a flash runs.
	ActionFirmwareUpdate Action = "firmware-update"
)

// ErrClass classifies how an action failed ("" = it succeeded): the state
// machine's value for the error classes of agent/errclass, which the agent
// maps onto it (agent/actions.go, classify) so this package stays pure and
// an Outcome comparable. It adds Fenced (agent/guard's refusal) and folds
// errclass.ErrUnsupported into Failed.
type ErrClass string

// Error classes.
const (
	ErrNone ErrClass = ""
	// ErrClassTransient: timeout, unreachable, 5xx. Retried soon, not counted.
	ErrClassTransient ErrClass = "transient"
	// ErrClassFailed: the operation failed. Counted, retried with backoff.
	ErrClassFailed ErrClass = "failed"
	// ErrClassAuth: the BMC refused the credentials. Counted.
	ErrClassAuth ErrClass = "auth"
	// ErrClassNotFound: the provisioner lost the node; re-register.
	ErrClassNotFound ErrClass = "not-found"
	// ErrClassFenced: our lease is gone or the host is blocked. Like
	// transient: not counted.
	ErrClassFenced ErrClass = "fenced"
)

// Outcome is the result of running one Action.
type Outcome struct {
	// Action is the action that ran.
	Action Action
	// Err is how it failed; "" on success.
	Err ErrClass
	// Message is a human-readable note (error text on failure). Never a
	// password or token.
	Message string
	// ProvisioningID is the provisioner's ID for the host, when learnt.
	ProvisioningID string
	// PoweredOn is the power state, when learnt.
	PoweredOn *bool
	// HardwareDetails is the inventory, when learnt (inspection).
	HardwareDetails *wire.HardwareDetails
	// BMCDetails is what was learnt about the BMC, when learnt
	// (registration).
	BMCDetails *wire.BMCDetails
	// ConfigDrive is the config drive provisioning published, when it
	// published one.
	ConfigDrive *wire.ConfigDriveStatus
	// InProgress: started, not finished; Step asks for the same action again.
	InProgress bool
}

// Decision is what Step returns: what to report and what to do next.
type Decision struct {
	// Status is the next status to report (write it only if it changed).
	Status wire.HostStatus
	// Action is the one action to run now (ActionNone = none).
	Action Action
	// RequeueAfter is when to look again if nothing changes (0 = only on
	// change).
	RequeueAfter time.Duration
	// Events to record; Time = Input.Now.
	Events []wire.Event
	// Acks are the intents acknowledged now (Drop for resume, one-shot).
	Acks []wire.IntentAck
	// Blocked: the host must not be mutated (detached, maintenance,
	// unmanaged, awaiting handoff, removal past its point of no return).
	// The agent calls guard.Block before sending Acks; false → Unblock.
	Blocked bool
	// Remove: the record may be deleted now (deletion or removal complete).
	Remove bool
	// Rule names the table row that produced this decision (for logs and
	// tests); empty when no row matched and nothing changed.
	Rule string
}
