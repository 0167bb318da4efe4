package fsm

import "time"

// CmdRequestBMCRotation records an operator's request to rotate the
// tier's BMC account on a host (fsm_bmcrotation.go). A new command type,
// so the version gate writes it only once every voter applies it: an
// older binary would not know the request, and the holder's confirm that
// drops it (BMCAccountCmd.Request) would apply differently.
const CmdRequestBMCRotation CmdType = 35

// RequestBMCRotationCmd is one on-demand rotation request. Actor and
// Reason are the operator's; Time is stamped by the leader.
type RequestBMCRotationCmd struct {
	Name   string    `json:"name"`
	Actor  string    `json:"actor,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Time   time.Time `json:"time"`
}

func (RequestBMCRotationCmd) Type() CmdType { return CmdRequestBMCRotation }
func (c RequestBMCRotationCmd) Key() string { return "h/" + c.Name }
