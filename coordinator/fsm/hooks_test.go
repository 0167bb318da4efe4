package fsm

import "maps"

// corruptHost changes host name's consumer in f without a log entry, so
// its state differs from its peers' (the state hash's test).
func (f *FSM) corruptHost(name, consumer string) bool {
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

// commandsWithout is this binary's command table without types: what an
// older binary applies.
func commandsWithout(types ...CmdType) map[CmdType]byte {
	t := maps.Clone(commandVersions)
	for _, ct := range types {
		delete(t, ct)
	}
	return t
}
