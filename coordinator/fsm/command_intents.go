package fsm

import "github.com/rackfence/rackfence/shared/wire"

// PutOperationIntentCmd (CmdPutOperationIntent, body v1 JSON) sets one
// operation intent of a host: Kind wire.IntentReboot (one-shot),
// wire.IntentInspect (one-shot), wire.IntentPowerOff (held under
// Intent.Requester until withdrawn) or wire.IntentService (one-shot,
// body version operationServiceVersion). The FSM checks the host's state.
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

// operationServiceVersion (v2, JSON) is an operation intent command of
// kind service: a binary from before it would refuse the kind (and so
// diverge from its peers), so the gate writes it only once every voter
// applies it. Every other kind stays v1.
const operationServiceVersion = 2

func (c PutOperationIntentCmd) bodyVersion() byte {
	if c.Kind == wire.IntentService {
		return operationServiceVersion
	}
	return bodyJSON
}

func (c DeleteOperationIntentCmd) bodyVersion() byte {
	if c.Kind == wire.IntentService {
		return operationServiceVersion
	}
	return bodyJSON
}
