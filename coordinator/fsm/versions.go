package fsm

import (
	"maps"
	"slices"
	"strconv"
)

// commandVersions is every command type this binary applies and the
// newest body version it reads, as commandTable (command_table.go) says.
// The leader proposes a type or version only when every voter's recorded
// table has it (coordinator/gate.go); a member whose log holds one it does
// not know stops applying (fsm_stop.go).
var commandVersions = versionsOf(commandTable)

// versionsOf is the version table of a command table.
func versionsOf(t map[CmdType]cmdSpec) map[CmdType]byte {
	out := make(map[CmdType]byte, len(t))
	for ct, s := range t {
		out[ct] = s.version
	}
	return out
}

// LegacyVersions is what every binary released before the version gate
// (up to commit 162e986) applies. A member that never recorded its table
// (it runs such a binary) is assumed to apply exactly this. Never edit it.
var LegacyVersions = map[CmdType]byte{
	CmdInit: 1, CmdPutHost: 2, CmdDeleteHost: 1, CmdPutIntent: 2, CmdDeleteIntent: 2,
	CmdStatus: 2, CmdLeaseAcquire: 2, CmdLeaseRenew: 2, CmdLeaseRelease: 2, CmdLeaseExpire: 1,
	CmdPutCredentials: 1, CmdPutToken: 2, CmdSetMember: 1, CmdRemoveMember: 1, CmdBatch: 1,
	CmdNoop: 1, CmdSetPivoted: 1, CmdRevokeToken: 1, CmdTouchTokens: 1,
	CmdPutSealedCredentials: 1, CmdResealCredentials: 1,
}

// LegacyVersion names the binary version of a member that never recorded
// its command table.
const LegacyVersion = "legacy (before the version gate)"

// Commands is a command table on the wire: command type (decimal) to the
// newest body version.
type Commands = map[string]int

// WireCommands is table t in wire form.
func WireCommands(t map[CmdType]byte) Commands {
	out := make(Commands, len(t))
	for k, v := range t {
		out[strconv.Itoa(int(k))] = int(v)
	}
	return out
}

// Table reads a wire table back; entries that are not command types are
// ignored.
func Table(c Commands) map[CmdType]byte {
	out := make(map[CmdType]byte, len(c))
	for k, v := range c {
		n, err := strconv.Atoi(k)
		if err != nil || n < 0 || n > 255 || v < 0 || v > 255 {
			continue
		}
		out[CmdType(n)] = byte(v)
	}
	return out
}

// Level orders tables: the sum of the versions a table applies. A table
// that supports everything another does plus more has a higher level.
func Level(t map[CmdType]byte) int {
	n := 0
	for _, v := range t {
		n += int(v)
	}
	return n
}

// Supports reports whether table t applies type ct at body version v.
func Supports(t map[CmdType]byte, ct CmdType, v byte) bool {
	return t[ct] >= v && v >= 1
}

// Intersect is the table every one of ts applies.
func Intersect(ts ...map[CmdType]byte) map[CmdType]byte {
	if len(ts) == 0 {
		return maps.Clone(commandVersions)
	}
	out := maps.Clone(ts[0])
	for _, t := range ts[1:] {
		for k, v := range out {
			if w, ok := t[k]; !ok {
				delete(out, k)
			} else if w < v {
				out[k] = w
			}
		}
	}
	return out
}

// Missing lists, sorted, the "type/version" pairs of table this (what a
// member writes: its FSM's Commands) that table t does not apply.
func Missing(this, t map[CmdType]byte) []string {
	var out []string
	for k, v := range this {
		if t[k] < v {
			out = append(out, strconv.Itoa(int(k))+"/"+strconv.Itoa(int(v)))
		}
	}
	slices.Sort(out)
	return out
}
