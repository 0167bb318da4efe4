package fsm

import "github.com/rackfence/rackfence/shared/seal"

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
// Body version 2 (written only when the record holds data) adds the data
// map, sealed as one value (its JSON) beside the password, and its keys in
// the clear (GET lists them; the values never leave the seal).
type PutSealedCredentialsCmd struct {
	Name     string       `json:"name"`
	Username string       `json:"username"`
	Sealed   seal.Sealed  `json:"sealed"`
	DataKeys []string     `json:"dataKeys,omitempty"`
	Data     *seal.Sealed `json:"data,omitempty"`
}

// ResealCredentialsCmd re-seals the password of credentials Name, applied
// only if the record is still the one the leader read (Index): a PUT in
// between wins and the re-seal is refused with a conflict.
//
// Body version 2 (written only when the record holds data) re-seals the
// data too; a version 1 body leaves a record's data as it is.
type ResealCredentialsCmd struct {
	Name   string       `json:"name"`
	Index  uint64       `json:"index"`
	Sealed seal.Sealed  `json:"sealed"`
	Data   *seal.Sealed `json:"data,omitempty"`
}

// sealedCredsVersion is the newest body version of both sealed-credentials
// commands: 2 adds the sealed data map.
const sealedCredsVersion = 2

// A record without data is still written as version 1, so a binary from
// before data maps applies it; one with data is version 2, which such a
// binary refuses (ErrUnknownCommand) instead of dropping the data.
func (c PutSealedCredentialsCmd) bodyVersion() byte {
	if c.Data != nil {
		return sealedCredsVersion
	}
	return bodyVersion
}

func (c ResealCredentialsCmd) bodyVersion() byte {
	if c.Data != nil {
		return sealedCredsVersion
	}
	return bodyVersion
}

func (PutSealedCredentialsCmd) Type() CmdType { return CmdPutSealedCredentials }
func (ResealCredentialsCmd) Type() CmdType    { return CmdResealCredentials }

func (c PutSealedCredentialsCmd) Key() string { return "c/" + c.Name }
func (c ResealCredentialsCmd) Key() string    { return "c/" + c.Name }
