package fsm

import (
	"maps"
)

// Test-only hooks. Nothing in the binaries calls them.

// TestOnlyCorruptHost changes host name's consumer in this member's FSM
// without a log entry, so its state differs from its peers': the
// divergence check's test uses it to see the alarm. Never call it outside
// a test.
func (f *FSM) TestOnlyCorruptHost(name, consumer string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.s.Hosts[name]
	if h == nil {
		return false
	}
	c := *h
	c.Consumer = consumer
	f.s.Hosts[name] = &c
	f.s.rack(c.Rack).Hosts[name] = &c
	return true
}

// TestOnlyCommandsWithout is this binary's command table without the given
// types: Config.TestOnlyCommands for a member that plays an older binary.
func TestOnlyCommandsWithout(types ...CmdType) map[CmdType]byte {
	t := maps.Clone(commandVersions)
	for _, ct := range types {
		delete(t, ct)
	}
	return t
}

// TestOnlyWithCommand adds command type ct at body version v to this
// binary's table until undo is called: the version gate's test plays a
// binary that writes a type no older binary applies. Never call it
// outside a test.
func TestOnlyWithCommand(ct CmdType, v byte) (undo func()) {
	saved := maps.Clone(commandVersions)
	commandVersions[ct] = v
	return func() { commandVersions = saved }
}
