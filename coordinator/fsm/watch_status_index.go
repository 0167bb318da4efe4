package fsm

// An agent watches its rack without statuses (status=false) once it has its
// hosts: it keeps its own copy of their statuses. Most of a rack's changes
// are that agent's own status writes; each moved Index and answered its
// long poll with nothing it uses (the statuses are left out). So a
// status-less watch compares ?index= with statuslessIndex, which a write of
// hosts' statuses alone (with events, which no watch answers) does not move.
// Everything else does: a host created, changed, deleted or removed by its
// agent, an intent acknowledged (the agent sees its acks land), a lease
// change other than a quiet renewal.
//
// The answer is as for any watch (every host modified after ?index=, its
// status then left out), so a host changed only in its status may ride
// along in an answer woken by something else.

// statuslessIndex is the index of rack r's last change a status-less
// watcher sees. After a snapshot restore (f.statuslessAt emptied) it is
// watchIndex until the rack's next such change: a watcher may be woken
// for nothing, never left asleep over a change. The caller holds f.mu.
func (f *FSM) statuslessIndex(rack string, r *rackRec) uint64 {
	if i, ok := f.statuslessAt[rack]; ok {
		return i
	}
	return r.watchIndex()
}

// settleStatusless runs at the end of each entry, under f.mu: a rack touched by
// the entry in a way a status-less watcher sees (tx.touch, not
// tx.touchStatus) has its statuslessAt at the entry, whatever the order of
// the commands in a batch. A rack dropped since keeps its entry (a few
// bytes) until the next restore; a rack is created again only by such a
// change, which sets it anew.
func (t *tx) settleStatusless(f *FSM) {
	if len(t.statusless) == 0 {
		return
	}
	if f.statuslessAt == nil {
		f.statuslessAt = map[string]uint64{}
	}
	for name := range t.statusless {
		f.statuslessAt[name] = t.index
	}
}
