package fsm

import (
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// CmdBMCTask records the start of a long BMC task on a host (a firmware
// flash, BIOS settings, RAID, a disk erase), a new lease holder's take-over
// of it, or its end: the fence that keeps a second manager from starting
// another task or changing power mid-flash (fsm_bmctask.go). A type of
// its own: the gate writes it only when every voter applies it.
const CmdBMCTask CmdType = 24

// BMCTaskCmd is one write of a host's task record by the rack's lease
// holder: Start records (or adopts) a task, End ends it; exactly one is
// set. Time is stamped by the leader (the record's startedAt).
type BMCTaskCmd struct {
	Rack  string               `json:"rack"`
	Name  string               `json:"name"`
	Start *wire.BMCTaskRequest `json:"start,omitempty"`
	End   *wire.BMCTaskEnd     `json:"end,omitempty"`
	Time  time.Time            `json:"time"`
}

func (BMCTaskCmd) Type() CmdType { return CmdBMCTask }

// BMCTaskFromVersion (v2, JSON) is a task record naming the version
// before the flash (wire.BMCTaskRequest.FromVersion): a v1 binary would
// drop it and hold a record that differs from its peers'. Until every
// voter applies v2 the leader writes the record without it
// (Store.commandForm); every other write stays v1.
const BMCTaskFromVersion = 2

func (c BMCTaskCmd) bodyVersion() byte {
	if c.HasFromVersion() {
		return BMCTaskFromVersion
	}
	return bodyJSON
}

// HasFromVersion reports whether c records a version before the flash.
func (c BMCTaskCmd) HasFromVersion() bool { return c.Start != nil && c.Start.FromVersion != "" }

// WithoutFromVersion is c without the version before the flash (v1).
func (c BMCTaskCmd) WithoutFromVersion() BMCTaskCmd {
	if c.Start != nil {
		s := *c.Start
		s.FromVersion = ""
		c.Start = &s
	}
	return c
}
func (c BMCTaskCmd) Key() string { return "h/" + c.Name }

// epoch is the lease epoch the write is fenced by.
func (c BMCTaskCmd) epoch() uint64 {
	switch {
	case c.Start != nil:
		return c.Start.Epoch
	case c.End != nil:
		return c.End.Epoch
	}
	return 0
}
