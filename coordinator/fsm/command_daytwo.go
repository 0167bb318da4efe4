package fsm

// Day-two status (wire.HostStatus.DayTwo: the BIOS values, firmware
// inventory, volumes and last erase the agent found) rides in status
// reports from these body versions on. A binary from before them would
// drop it, so the leader writes a report carrying it in them only once
// every voter applies them (coordinator/gate.go), and before that writes
// the report without it (WithoutDayTwo): the agent's next report brings
// it again.
const (
	// StatusDayTwoVersion (v4, CmdStatus) is the MessagePack body of a
	// per-host report whose status carries dayTwo (and maybe health: v4
	// includes v3, command_health.go).
	StatusDayTwoVersion = 4
	// RackStatusDayTwoVersion (v5, CmdRackStatus) is the body of a rack
	// report where some host's status carries dayTwo (it may name
	// createdIndex and carry health too: v5 includes v3 and v4).
	RackStatusDayTwoVersion = 5
)

// hasDayTwo reports whether c's status carries dayTwo.
func (c StatusCmd) hasDayTwo() bool { return partDayTwo.inStatus(c) }

// WithoutDayTwo is c without its status's dayTwo. c is not changed.
func (c StatusCmd) WithoutDayTwo() StatusCmd { return partDayTwo.stripStatus(c) }

// hasDayTwo reports whether some host's status in c carries dayTwo.
func (c RackStatusCmd) hasDayTwo() bool { return partDayTwo.inRack(c) }

// WithoutDayTwo is c without any host's dayTwo. c is not changed.
func (c RackStatusCmd) WithoutDayTwo() RackStatusCmd { return partDayTwo.stripRack(c) }
