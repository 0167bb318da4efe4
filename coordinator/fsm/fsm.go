package fsm

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Result is what Apply returns for one command: the value the API answers
// (a host, a lease, ...) or the refusal.
type Result struct {
	Value any
	Err   error
}

// LeaseChange tells the leader's lease timers that a rack's lease changed
// at index: Lease nil means the rack is free.
type LeaseChange struct {
	Rack  string
	Lease *LeaseRec
	Index uint64
}

// FSM is the coordinator's replicated state machine. Apply is deterministic:
// it reads no clock and draws no random numbers; the leader stamps both into
// the command before it enters the log.
type FSM struct {
	mu sync.RWMutex
	s  *state
	// fleet is the per-host part of Fleet, kept with s (fleet_counts.go).
	fleet   *fleetCounts
	applied atomic.Uint64

	// waitMu guards the channels closed when something changes.
	waitMu    sync.Mutex
	appliedCh chan struct{}
	rackCh    map[string]chan struct{}
	// answers counts the watch answers built with changes (watch.go).
	answers atomic.Uint64

	// onLease is called (outside the lock) after lease changes; the
	// store arms or stops timers there when it leads.
	onLease func([]LeaseChange)
	// onApply observes each applied command type (metrics); may be nil.
	onApply func(CmdType)

	// stopped is set at the first entry this binary cannot apply
	// (fsm_stop.go); nothing is applied after it.
	stopped atomic.Pointer[StopReason]
	// onStop is called once, outside the lock, when the FSM stops.
	onStop func(*StopReason)
	// hashes computes the periodic state hash (statehash.go).
	hashes *hasher
	// commands is what this FSM applies: commandVersions, except in a
	// test that plays an older binary (Options.Commands).
	commands map[CmdType]byte
	// versionsGen counts changes of the member version table.
	versionsGen atomic.Uint64
	// inflated is the buffer Apply inflates compressed entries into,
	// reused from entry to entry (while ScratchKeep keeps it: scratch.go): each would otherwise be
	// garbage as large as the entry. inflateMu guards it, although Raft
	// applies one entry at a time.
	inflateMu   sync.Mutex
	inflated    []byte
	inflateKeep ScratchKeep
	// allOrder and rackOrder are the host order of the last view of
	// every host and of one rack (listview.go).
	allOrder, rackOrder atomic.Pointer[hostOrder]
}

// NewFSM returns an empty FSM with the default Options (New(Options{})).
func NewFSM() *FSM { return New(Options{}) }

// AppliedIndex is the index of the last log entry the FSM applied.
func (f *FSM) AppliedIndex() uint64 { return f.applied.Load() }

// tx collects the effects of applying one log entry.
type tx struct {
	index uint64
	// racks holds the racks the entry changed in a way their watchers
	// see, 1 when a status-less watcher sees it too, else 0
	// (watch_index.go). Marks are ORed in (one map write each), so a
	// batch's order does not matter.
	racks  map[string]uint8
	leases []LeaseChange
}

// touch marks rack changed in a way every watcher sees.
func (t *tx) touch(rack string) {
	if t.racks == nil {
		t.racks = map[string]uint8{}
	}
	t.racks[rack] |= 1
}

// touchStatus marks rack changed in its hosts' statuses only: its watchers
// are woken, but a status-less watch need not answer.
func (t *tx) touchStatus(rack string) {
	if t.racks == nil {
		t.racks = map[string]uint8{}
	}
	t.racks[rack] |= 0 // marks rack, keeping a touch's 1
}

// Apply applies the command log entry index holding data (one command, a
// CmdBatch, or either of them in a CmdCompressed entry). It returns a
// Result, or a []Result for a batch entry.
// Entries that hold no command count as applied through MarkApplied.
func (f *FSM) Apply(index uint64, data []byte) any {
	if r := f.stopped.Load(); r != nil {
		return Result{Err: r}
	}
	var inflateErr error
	if len(data) >= 2 && CmdType(data[0]) == CmdCompressed && knows(f.commands, data) {
		f.inflateMu.Lock()
		defer f.inflateMu.Unlock()
		data, inflateErr = inflate(f.inflated, data)
		if inflateErr == nil {
			f.inflated = data
		}
		f.keepInflated(len(data))
	} else {
		f.inflateMu.Lock()
		f.keepInflated(0)
		f.inflateMu.Unlock()
	}
	if p := unknownPart(f.commands, data); p != nil {
		r := newStopReason(f.commands, index, p)
		if f.stopped.CompareAndSwap(nil, r) && f.onStop != nil {
			f.onStop(r)
		}
		return Result{Err: r}
	}
	t := &tx{index: index}
	var out any
	f.mu.Lock()
	if inflateErr != nil {
		out = Result{Err: inflateErr}
	} else if len(data) > 0 && CmdType(data[0]) == CmdBatch {
		parts, err := DecodeBatch(data)
		if err != nil {
			out = Result{Err: err}
		} else {
			rs := make([]Result, len(parts))
			for i, p := range parts {
				rs[i] = f.applyOne(t, p)
			}
			out = rs
		}
	} else {
		out = f.applyOne(t, data)
	}
	t.settleSeen(f.s)
	f.applied.Store(index)
	f.hashes.maybeCapture(f, index)
	f.mu.Unlock()
	f.markApplied(index, t)
	return out
}

func (f *FSM) applyOne(t *tx, data []byte) Result {
	c, err := Decode(data)
	if err != nil {
		return Result{Err: err}
	}
	if f.onApply != nil {
		f.onApply(c.Type())
	}
	return f.applyCmd(t, c)
}

// applyCmd applies one decoded command; the caller holds f.mu.
func (f *FSM) applyCmd(t *tx, c Command) Result {
	spec := commandTable[c.Type()]
	if spec.apply == nil {
		return Result{Err: ErrUnknownCommand}
	}
	v, err := spec.apply(f, t, c)
	return Result{Value: v, Err: err}
}

// markApplied publishes the new applied index and wakes waiters.
func (f *FSM) markApplied(index uint64, t *tx) {
	f.waitMu.Lock()
	close(f.appliedCh)
	f.appliedCh = make(chan struct{})
	if t != nil {
		for r := range t.racks {
			if ch, ok := f.rackCh[r]; ok {
				close(ch)
				delete(f.rackCh, r)
			}
		}
	}
	f.waitMu.Unlock()
	if t != nil && len(t.leases) > 0 && f.onLease != nil {
		f.onLease(t.leases)
	}
}

// wakeAll wakes every waiter (after a restore).
func (f *FSM) wakeAll() {
	f.waitMu.Lock()
	close(f.appliedCh)
	f.appliedCh = make(chan struct{})
	for r, ch := range f.rackCh {
		close(ch)
		delete(f.rackCh, r)
	}
	f.waitMu.Unlock()
}

// appliedWait returns a channel closed at the next applied entry.
func (f *FSM) appliedWait() <-chan struct{} {
	f.waitMu.Lock()
	defer f.waitMu.Unlock()
	return f.appliedCh
}

// rackWait returns a channel closed at the next change of rack.
func (f *FSM) rackWait(rack string) <-chan struct{} {
	f.waitMu.Lock()
	defer f.waitMu.Unlock()
	ch, ok := f.rackCh[rack]
	if !ok {
		ch = make(chan struct{})
		f.rackCh[rack] = ch
	}
	return ch
}

// MarkApplied counts log entry index, which holds no command (a Raft
// configuration change, a no-op, a barrier), as applied, so a read
// waiting for the commit index after a membership change does not wait
// for the next write. It never moves the applied index back.
func (f *FSM) MarkApplied(index uint64) {
	f.mu.Lock()
	if index > f.applied.Load() {
		f.applied.Store(index)
	}
	f.mu.Unlock()
	f.markApplied(index, nil)
}

// Snapshot captures the state (snapshot.go); the capture is cheap and
// Encode writes it while new entries are applied.
// A stopped FSM refuses: Raft would record the snapshot at an index past
// the entry this member could not apply, and a restart would skip it.
func (f *FSM) Snapshot() (*Snapshot, error) {
	if r := f.stopped.Load(); r != nil {
		return nil, fmt.Errorf("no snapshot: %w", r)
	}
	return f.snapshot(), nil
}

// keepInflated records an entry that inflated into used bytes (0: not
// compressed) and drops the kept buffer when ScratchKeep says so; the
// caller holds inflateMu.
func (f *FSM) keepInflated(used int) {
	if f.inflated != nil && !f.inflateKeep.Keep(used, cap(f.inflated)) {
		f.inflated = nil
	}
}
