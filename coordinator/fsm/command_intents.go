package fsm

import "github.com/rackfence/rackfence/shared/wire"

// PutOperationIntentCmd (CmdPutOperationIntent, body v1 JSON) sets one
// operation intent of a host: Kind wire.IntentReboot (one-shot),
// wire.IntentInspect (one-shot) or wire.IntentPowerOff (held under
// Intent.Requester until withdrawn). The FSM checks the host's state.
type PutOperationIntentCmd struct {
	Name   string      `json:"name"`
	Kind   string      `json:"kind"`
	Intent wire.Intent `json:"intent"`
}

// DeleteOperationIntentCmd (CmdDeleteOperationIntent, body v1 JSON)
// withdraws the power-off Requester holds (Kind wire.IntentPowerOff), or a
// reboot or inspect not yet handled.
type DeleteOperationIntentCmd struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Requester string `json:"requester,omitempty"`
}

func (PutOperationIntentCmd) Type() CmdType    { return CmdPutOperationIntent }
func (DeleteOperationIntentCmd) Type() CmdType { return CmdDeleteOperationIntent }
func (c PutOperationIntentCmd) Key() string    { return "h/" + c.Name }
func (c DeleteOperationIntentCmd) Key() string { return "h/" + c.Name }
