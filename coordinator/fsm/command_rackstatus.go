package fsm

import (
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// CmdRackStatus is one agent's status report for many hosts of its rack
// (POST /v1/racks/{rack}/status), fenced once by the rack lease epoch and
// applied as one entry (issue 23). A type of its own: a binary that
// predates it refuses the entry, and the gate (coordinator/gate.go) writes it only
// when every voter applies it; otherwise the store splits it into
// per-host CmdStatus commands (coordinator/store_rackstatus.go).
const CmdRackStatus CmdType = 22

// RackStatusCmd is a rack status report: each host either a full status
// write (as StatusCmd) or a touch, which refreshes the epoch and
// lastUpdated of an unchanged status. Time is stamped by the leader.
type RackStatusCmd struct {
	Rack  string                `json:"rack"`
	Epoch uint64                `json:"epoch"`
	Hosts []wire.RackHostReport `json:"hosts"`
	Time  time.Time             `json:"time"`
}

func (RackStatusCmd) Type() CmdType { return CmdRackStatus }

// Key is the rack's lease key: a rack report never shares a batch with a
// lease change of its rack, so the epoch it was fenced by holds for all
// of its hosts.
func (c RackStatusCmd) Key() string { return "r/" + c.Rack }
