package coordinator

import "github.com/rackfence/rackfence/coordinator/seal"

// Command types of sealed credentials. 32–39 are kept for secrets so new
// command types added elsewhere (from 18 up) do not collide with them.
const (
	// CmdPutSealedCredentials stores credentials whose password the
	// leader's API handler sealed before the write. It replaces
	// CmdPutCredentials, whose body (plaintext password) this binary still
	// decodes from old logs but never writes.
	CmdPutSealedCredentials CmdType = 32
	// CmdResealCredentials replaces the sealed password of a record (key
	// rotation, or sealing a legacy plaintext one), compare-and-set on the
	// record's index.
	CmdResealCredentials CmdType = 33
)

// PutSealedCredentialsCmd stores BMC credentials with a sealed password.
type PutSealedCredentialsCmd struct {
	Name     string      `json:"name"`
	Username string      `json:"username"`
	Sealed   seal.Sealed `json:"sealed"`
}

// ResealCredentialsCmd re-seals the password of credentials Name, applied
// only if the record is still the one the leader read (Index): a PUT in
// between wins and the re-seal is refused with a conflict.
type ResealCredentialsCmd struct {
	Name   string      `json:"name"`
	Index  uint64      `json:"index"`
	Sealed seal.Sealed `json:"sealed"`
}

func (PutSealedCredentialsCmd) Type() CmdType { return CmdPutSealedCredentials }
func (ResealCredentialsCmd) Type() CmdType    { return CmdResealCredentials }

func (c PutSealedCredentialsCmd) Key() string { return "c/" + c.Name }
func (c ResealCredentialsCmd) Key() string    { return "c/" + c.Name }

// decodeSealed decodes the sealed-credentials command types; ok is false
// for any other type.
func decodeSealed(t CmdType, body []byte) (c Command, ok bool, err error) {
	switch t {
	case CmdPutSealedCredentials:
		c, err = decodeBody[PutSealedCredentialsCmd](bodyJSON, body)
	case CmdResealCredentials:
		c, err = decodeBody[ResealCredentialsCmd](bodyJSON, body)
	default:
		return nil, false, nil
	}
	return c, true, err
}
