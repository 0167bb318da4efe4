package wire

import (
	"fmt"
	"time"
)

// The BMC account of the tier on one host (docs/operator.md, "Fencing
// and its one limit"): an account of rackfence's own on the host's BMC
// whose password the rack's lease holder rotates when it takes the rack
// over, so a request of an older holder is refused by the BMC itself.
// Its password is sealed on the coordinator like a credentials record's.

// States of a BMC account record.
const (
	// BMCAccountPending: a new password was recorded (PendingEpoch) and
	// may or may not have reached the BMC yet; the BMC accepts either the
	// current password or the pending one.
	BMCAccountPending = "pending"
	// BMCAccountConfirmed: the BMC accepts the current password (a login
	// with it worked under Epoch).
	BMCAccountConfirmed = "confirmed"
	// BMCAccountOff: the fence at the BMC is off for this host (Reason
	// says why); the agent uses the operator's credentials.
	BMCAccountOff = "off"
)

// Operations of BMCAccountWrite.
const (
	BMCAccountOpPending = "pending"
	BMCAccountOpConfirm = "confirm"
	BMCAccountOpOff     = "off"
)

// Event reasons the coordinator writes for BMC account records (never
// with a password).
const (
	ReasonBMCAccountRotated = "BMCAccountRotated"
	ReasonBMCAccountOff     = "BMCAccountOff"
)

// BMCAccount is GET /v1/hosts/{name}/bmc-account. Password and
// PendingPassword are set only with ?reveal=true, to the agent holding the
// host's rack (naming its epoch) or to an admin (audited).
type BMCAccount struct {
	Host     string `json:"host"`
	Username string `json:"username,omitempty"`
	State    string `json:"state"`
	// Epoch is the lease epoch of the last confirmed rotation;
	// PendingEpoch the epoch of the pending password (0: none).
	Epoch        uint64    `json:"epoch,omitempty"`
	PendingEpoch uint64    `json:"pendingEpoch,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	RotatedAt    time.Time `json:"rotatedAt,omitzero"`
	// Index is the Raft index of the record's last write.
	Index           uint64 `json:"index"`
	Password        string `json:"password,omitempty"`
	PendingPassword string `json:"pendingPassword,omitempty"`
}

// BMCAccountWrite is PUT /v1/hosts/{name}/bmc-account, by the lease holder
// of the host's rack (fenced by Epoch): record a new password as pending
// before the BMC is asked to take it, confirm it once a login with it
// worked, or record that the fence at the BMC is off for the host.
type BMCAccountWrite struct {
	Epoch    uint64 `json:"epoch"`
	Op       string `json:"op"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Request is the createdIndex of the on-demand rotation request
	// (Intents.RotateCredentials) this confirm or off write answers; the
	// coordinator then drops that request. 0: none.
	Request uint64 `json:"request,omitempty"`
}

// MaxBMCPassword bounds a BMC account password (bytes).
const MaxBMCPassword = 128

// ValidateBMCAccountWrite checks a write; errors name the field.
func ValidateBMCAccountWrite(w *BMCAccountWrite) error {
	if w.Epoch == 0 {
		return fieldErr("epoch", "is required: the lease epoch of the rack the host is in")
	}
	switch w.Op {
	case BMCAccountOpPending:
		if w.Request != 0 {
			return fieldErr("request", "applies only to op confirm or off: the request is answered when the rotation ends")
		}
		if w.Username == "" || len(w.Username) > 63 {
			return fieldErr("username", "is required with op pending (1 to 63 characters)")
		}
		if w.Password == "" || len(w.Password) > MaxBMCPassword {
			return fieldErr("password", "is required with op pending (1 to %d bytes)", MaxBMCPassword)
		}
	case BMCAccountOpConfirm:
		if w.Password != "" {
			return fieldErr("password", "must be empty with op confirm: the pending password is confirmed")
		}
	case BMCAccountOpOff:
		if w.Reason == "" || len(w.Reason) > 1024 {
			return fieldErr("reason", "is required with op off (at most 1024 bytes): say why the fence at the BMC is off")
		}
		if w.Password != "" {
			return fieldErr("password", "must be empty with op off")
		}
	default:
		return fieldErr("op", "%q is not one of %s, %s, %s", w.Op, BMCAccountOpPending, BMCAccountOpConfirm, BMCAccountOpOff)
	}
	return nil
}

// String never shows a password.
func (a BMCAccount) String() string {
	return fmt.Sprintf("host %s account %s %s (epoch %d, pending %d)", a.Host, a.Username, a.State, a.Epoch, a.PendingEpoch)
}
