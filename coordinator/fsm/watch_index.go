package fsm

// A rack watch compares ?index= not with the rack's Index (the index of its
// last change of replicated state) but with the index of its last change
// that kind of watcher sees, so two kinds of change move Index and answer
// fewer watches:
//
//   - A lease renewal that keeps holder, epoch and TTL answers no watch:
//     the watch answers the lease as holder, epoch and TTL, which it
//     keeps. At one renewal per rack every TTL/3 such answers were most of
//     a steady fleet's (100 racks at the default 10 s TTL: 30 answers and
//     30 new long polls per second, each answering nothing new).
//   - A write of hosts' statuses alone (with events, which no watch
//     answers) answers a watch with statuses but not a status-less one
//     (status=false): an agent watches its rack so once it has its hosts,
//     keeping its own copy of their statuses, and most of a rack's changes
//     are that agent's own status writes. Everything else answers it: a
//     host created, changed, deleted or removed by its agent, an intent
//     acknowledged (the agent sees its acks land), a lease change other
//     than a quiet renewal. The answer is as for any watch (every host
//     modified after ?index=, its status then left out), so a host changed
//     only in its status may ride along in an answer woken by something
//     else.
//
// Commands mark the racks they change in the entry's tx (tx.touch, or
// tx.touchStatus for statuses alone; a quiet renewal marks nothing), and
// settleSeen records both indexes on the rack at the end of the entry,
// whatever the order of a batch's commands. Neither is in the state: not
// snapshotted, not hashed, no byte of the log.

// seenAt is, for one rack, the index of its last change each kind of
// watcher sees. Zero means not known (after a snapshot restore, which
// leaves it out): it reads as the rack's Index, so a watcher may be woken
// once for nothing, never left asleep over a change.
type seenAt struct {
	// all is the last change every watcher sees.
	all uint64
	// statusless is the last change a status-less watcher sees. Zero
	// reads as all: after a restore, status writes answer a status-less
	// watch until the rack's first other change.
	statusless uint64
}

// watchIndex is the index of rack r's last change every watcher sees.
func (r *rackRec) watchIndex() uint64 {
	if r.seen.all == 0 {
		return r.Index
	}
	return r.seen.all
}

// statuslessIndex is the index of rack r's last change a status-less
// watcher sees.
func (r *rackRec) statuslessIndex() uint64 {
	if r.seen.statusless == 0 {
		return r.watchIndex()
	}
	return r.seen.statusless
}

// quietChange moves r's Index to index for a change no watcher sees (a
// renewal that keeps the lease's holder, epoch and TTL). It first pins
// seen.all at what it reads now (after a restore, the Index before this
// change), so the change moves nothing a watch compares with.
func (r *rackRec) quietChange(index uint64) {
	r.seen.all = r.watchIndex()
	r.Index = index
}

// settleSeen runs at the end of each entry, under f.mu: every rack the
// entry touched (a change its watchers see, which set its Index to the
// entry's) records the entry as its last change every watcher sees, and
// as its last change a status-less watcher sees unless it was touched in
// its statuses alone. A rack the entry dropped is skipped.
func (t *tx) settleSeen(s *state) {
	for name, mark := range t.racks {
		r := s.Racks[name]
		if r == nil {
			continue
		}
		r.seen.all = t.index
		if mark == 1 {
			r.seen.statusless = t.index
		}
	}
}
