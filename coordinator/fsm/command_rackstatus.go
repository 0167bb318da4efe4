package fsm

import (
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// CmdRackStatus is one agent's status report for many hosts of its rack
// (POST /v1/racks/{rack}/status), fenced once by the rack lease epoch and
// applied as one entry. A type of its own: a binary that
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

// RackStatusCreatedVersion (v3) is the MessagePack body of a report that
// names a host's createdIndex (wire.RackHostReport.Created): Apply
// refuses a host whose record has another one. A report naming none is
// still v2, which binaries from before the check apply; the leader writes
// v3 only once every voter applies it, and before that writes the report
// without Created (coordinator/store_rackstatus.go): no check, as those
// binaries would make none.
const RackStatusCreatedVersion = 3

func (c RackStatusCmd) bodyVersion() byte {
	for _, p := range statusParts { // status_parts.go, newest first
		if p.inRack(c) {
			return p.rack
		}
	}
	for i := range c.Hosts {
		if c.Hosts[i].Created != 0 {
			return RackStatusCreatedVersion
		}
	}
	return BodyBinary
}

// CreatedChecked reports whether c names some host's createdIndex (its
// body is version 3 or later).
func (c RackStatusCmd) CreatedChecked() bool {
	for i := range c.Hosts {
		if c.Hosts[i].Created != 0 {
			return true
		}
	}
	return false
}

// WithoutCreated is c without the createdIndex of any host: the form a
// voter from before the check applies (body version 2). c is not changed.
func (c RackStatusCmd) WithoutCreated() RackStatusCmd {
	if !c.CreatedChecked() {
		return c
	}
	hs := make([]wire.RackHostReport, len(c.Hosts))
	copy(hs, c.Hosts)
	for i := range hs {
		hs[i].Created = 0
	}
	c.Hosts = hs
	return c
}

// decodeRackStatus decodes a body of any version. A body older than v3
// is applied without the check even if it names a createdIndex (no
// leader writes one so): a binary from before the check ignores the
// field, and every member must apply the entry alike.
func decodeRackStatus(ver byte, body []byte) (Command, error) {
	c, err := decodeBody[RackStatusCmd](binBody, ver, body)
	if err != nil || ver >= RackStatusDriveServerVersion {
		return c, err
	}
	c = c.(RackStatusCmd).WithoutDriveServer()
	if ver >= RackStatusDayTwoVersion {
		return c, nil
	}
	c = c.(RackStatusCmd).WithoutDayTwo()
	if ver >= RackStatusHealthVersion {
		return c, nil
	}
	c = c.(RackStatusCmd).WithoutHealth()
	if ver >= RackStatusCreatedVersion {
		return c, nil
	}
	return c.(RackStatusCmd).WithoutCreated(), nil
}

// Key is the rack's lease key: a rack report never shares a batch with a
// lease change of its rack, so the epoch it was fenced by holds for all
// of its hosts.
func (c RackStatusCmd) Key() string { return "r/" + c.Rack }
