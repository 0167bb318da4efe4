package fsm

// A lease renewal moves the rack's Index (it is a change of the rack's
// replicated state, covered by the state hash) but nothing a watcher sees:
// the watch answers the lease as holder, epoch and TTL, which a renewal of
// the same TTL keeps. At one renewal per rack every TTL/3 such wakeups were
// most of a steady fleet's watch answers (100 racks at the default 10 s
// TTL: 30 answers and 30 new long polls per second, each answering nothing
// new). So a watch compares ?index= with watchIndex, not Index.

// watchIndex is the index of the rack's last change a watcher sees: Index,
// unless the changes since loud were all quiet renewals.
func (r *rackRec) watchIndex() uint64 {
	if r.quiet != 0 && r.Index == r.quiet {
		return r.loud
	}
	return r.Index
}

// quietChange records a change at index that watchers need not see (a
// renewal that keeps the lease's holder, epoch and TTL). A later entry's
// change sets Index past quiet, and a change in the same entry (a batch)
// touches the rack, which settleQuiet turns back to loud: either way
// watchIndex is Index again. After a snapshot restore quiet and loud are
// zero: a watcher may be woken once for nothing, never left asleep over a
// change.
func (r *rackRec) quietChange(index uint64) {
	if r.quiet == 0 || r.Index != r.quiet {
		r.loud = r.Index
	}
	r.Index, r.quiet = index, index
}

// settleQuiet runs at the end of each entry: a rack touched by the entry
// (a change its watchers see) has no quiet change pending, whatever the
// order of the commands in a batch.
func (t *tx) settleQuiet(s *state) {
	for name := range t.racks {
		if r := s.Racks[name]; r != nil {
			r.quiet = 0
		}
	}
}
