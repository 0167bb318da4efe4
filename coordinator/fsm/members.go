package fsm

// The member version table, as the version gate reads it
// (coordinator/gate.go).

// MemberVersion returns what member id applies, as recorded; ok false
// when it never recorded one (a binary from before the gate).
func (f *FSM) MemberVersion(id string) (MemberVersion, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	v, ok := f.s.Versions[id]
	return v, ok
}

// MemberTable is the command table member id applies.
func (f *FSM) MemberTable(id string) (map[CmdType]byte, string) {
	if v, ok := f.MemberVersion(id); ok {
		return Table(v.Commands), v.Binary
	}
	return LegacyVersions, LegacyVersion
}
