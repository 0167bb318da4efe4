package coordinator

import (
	"maps"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// PlayOlderBinary makes the member opened with c apply (and report) only
// table's command types and body versions, as an older binary would.
func PlayOlderBinary(c *Config, table map[fsm.CmdType]byte) { c.commands = table }

// CommandsWithout is this binary's command table without types: what an
// older binary applies.
func CommandsWithout(types ...fsm.CmdType) map[fsm.CmdType]byte {
	t := maps.Clone(fsm.NewFSM().Commands())
	for _, ct := range types {
		delete(t, ct)
	}
	return t
}
