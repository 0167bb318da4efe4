package fsm

import (
	"time"

	"github.com/rackfence/rackfence/shared/seal"
)

// CmdBMCAccount writes the record of the tier's BMC account on a host: a
// pending password, its confirmation, or "the fence at the BMC is off"
// (fsm_bmcaccount.go). In the secrets range (32–39): the record is a
// sealed credentials record. Fenced by the rack's lease epoch in Apply.
const CmdBMCAccount CmdType = 34

// BMCAccountCmd is one write of a host's BMC account record by the
// rack's lease holder. Op is a wire.BMCAccountOp*; Sealed is the pending
// password (op pending), sealed by the leader under
// BMCAccountRecord(Name)'s AAD. Time is stamped by the leader.
type BMCAccountCmd struct {
	Rack     string       `json:"rack"`
	Name     string       `json:"name"`
	Epoch    uint64       `json:"epoch"`
	Op       string       `json:"op"`
	Username string       `json:"username,omitempty"`
	Sealed   *seal.Sealed `json:"sealed,omitempty"`
	Reason   string       `json:"reason,omitempty"`
	// Request is the on-demand rotation request a confirm or off write
	// answers (its createdIndex; 0: none): Apply drops it from the host.
	Request uint64    `json:"request,omitempty"`
	Time    time.Time `json:"time"`
}

func (BMCAccountCmd) Type() CmdType { return CmdBMCAccount }
func (c BMCAccountCmd) Key() string { return "c/" + BMCAccountRecord(c.Name) }

// BMCAccountRecord is the credentials record name of host's BMC account:
// "bmc/HOST", a name no credentials PUT can make (names are labels), so
// the record lives beside the operator's records (sealed, snapshotted,
// restored alike) without colliding with them.
func BMCAccountRecord(host string) string { return "bmc/" + host }

// IsBMCAccountRecord reports whether a credentials record name is a BMC
// account's.
func IsBMCAccountRecord(name string) bool { return len(name) > 4 && name[:4] == "bmc/" }
