package fsm

// Scratch buffers (the leader batcher's batch, the FSM's inflated entry)
// grow to the largest entry they held: while thousands of hosts register,
// entries of rack reports with hardware details run to megabytes, and
// afterwards the steady traffic is entries of a few hundred bytes that
// never use them. ScratchKeep gives such a buffer back once a window of
// entries needed far less.
const (
	// ScratchWindow is how many entries, large or small, a buffer's use
	// is judged over.
	ScratchWindow = 256
	// ScratchFloor is the capacity always kept.
	ScratchFloor = 64 << 10
)

// ScratchKeep tracks the use of one scratch buffer. Its zero value is
// ready; it is not safe for concurrent use (each buffer has one owner).
type ScratchKeep struct {
	peak, n int
}

// Keep records one entry that needed used bytes of the buffer (0 for an
// entry that did not use it) and reports whether a buffer of capacity c
// is worth keeping: at most MaxKept, and at the end of each window of
// ScratchWindow entries at most ScratchFloor or twice the most the window
// used. A false answer means drop the buffer (the next use allocates
// what it needs).
func (k *ScratchKeep) Keep(used, c int) bool {
	k.peak = max(k.peak, used)
	k.n++
	if c > MaxKept {
		return false
	}
	if k.n < ScratchWindow {
		return true
	}
	keep := c <= max(ScratchFloor, 2*k.peak)
	k.peak, k.n = 0, 0
	return keep
}
