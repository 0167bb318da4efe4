package fsm

// Lease epochs carry the cluster's restore generation in their high bits:
//
//	epoch = generation<<GenerationShift + Raft index of the grant
//
// A restore (rackfence-coordinator restore) bumps the generation, so every
// epoch the restored cluster grants is above every epoch the old cluster
// could have granted, even though the restored Raft indexes start lower
// than the old cluster's last ones: an agent of the old cluster holding a
// newer epoch is stale everywhere. Generation 0 (a cluster never restored)
// gives epoch = index, as before.
//
// GenerationShift is 40 and MaxGeneration 8191 (bits 40-52), so epochs
// stay below 2^53 and survive JSON numbers read as float64 (a browser
// dashboard). The scheme assumes Raft indexes below 2^40 (10^12 entries:
// 30 years at 1,000 log entries per second).
const (
	GenerationShift = 40
	MaxGeneration   = 1<<(53-GenerationShift) - 1
)

// EpochAt is the epoch of a lease granted at Raft index under a generation.
func EpochAt(generation, index uint64) uint64 {
	return generation<<GenerationShift + index
}
