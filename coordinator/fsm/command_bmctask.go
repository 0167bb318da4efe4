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
