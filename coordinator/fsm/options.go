package fsm

// Options are what the wiring (coordinator.Store) sets on the FSM before
// it applies its first entry.
type Options struct {
	// OnLease is called (outside the lock) after lease changes; the store
	// arms or stops timers there when it leads.
	OnLease func([]LeaseChange)
	// OnApply observes each applied command type (metrics); may be nil.
	OnApply func(CmdType)
	// OnStop is called once, outside the lock, when the FSM stops
	// (fsm_stop.go).
	OnStop func(*StopReason)
	// HashEvery is how often, in log entries, the state is hashed
	// (statehash.go); 0 is DefaultHashEvery.
	HashEvery uint64
	// Commands is what this FSM applies: nil is this binary's table; a
	// test that plays an older binary gives a smaller one.
	Commands map[CmdType]byte
}

// New returns an empty FSM with o.
func New(o Options) *FSM {
	f := &FSM{s: newState(), fleet: newFleetCounts(), appliedCh: make(chan struct{}), rackCh: map[string]chan struct{}{},
		hashes: newHasher(o.HashEvery), commands: commandVersions,
		onLease: o.OnLease, onApply: o.OnApply, onStop: o.OnStop}
	if o.Commands != nil {
		f.commands = o.Commands
	}
	return f
}

// Commands is the command table this FSM applies.
func (f *FSM) Commands() map[CmdType]byte { return f.commands }

// VersionsGen counts changes of the member version table: the version
// gate caches what every voter applies until it moves.
func (f *FSM) VersionsGen() uint64 { return f.versionsGen.Load() }
