package fsm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rackfence/rackfence/shared/wire"
)

// DefaultHashEvery is how often, in log entries, every member hashes its
// FSM state: at the first command entry at or past each multiple of it.
// Every member applies the same command entries, so members hash at the
// same indexes and the leader compares them (coordinator/divergence.go).
const DefaultHashEvery = 1024

// hashStepHosts is the fleet size up to which members hash every
// HashEvery entries. A hash covers the whole state, so its cost grows
// with the hosts (about 0.26 s of CPU at 100,000 on a fast day, against
// 2 ms at 1,000): above hashStepHosts the interval doubles each time the
// hosts double (2× above 16,384 hosts, 4× above 32,768, 8× above 65,536
// …), up to hashMaxScale × HashEvery. The host count after each entry is
// replicated state, so every member picks the same interval at the same
// index; the boundaries of a doubled interval are boundaries of the
// smaller ones, so a member still hashing at the smaller interval (an
// older binary during an upgrade) shares the larger one's indexes and is
// compared there. The cost: at 100,000 hosts a divergence is found after
// up to 8× as many entries.
const hashStepHosts = 16384

// hashMaxScale bounds how far the fleet stretches the interval.
const hashMaxScale = 64

// keepHashes is how many recent hashes a member keeps (and reports).
const keepHashes = 8

// StateHash is a member's FSM state hash after applying log entry Index:
// SHA-256 (hex) over the replicated state in a canonical order.
type StateHash = wire.StateHash

// hasher takes the periodic state hashes. The capture at the boundary is
// cheap (record pointers are copied under the FSM lock; records are
// immutable); the hashing itself runs after, off the apply path.
type hasher struct {
	every uint64
	// stepHosts is hashStepHosts (smaller in tests).
	stepHosts int
	// prev is the index applied before the current entry (or restored).
	prev uint64

	mu     sync.Mutex
	recent []StateHash // ascending by index, at most keepHashes
	wg     sync.WaitGroup
	// busy is set while a hash runs: a boundary met meanwhile is skipped
	// (a member that skips an index is simply not compared there), so a
	// burst of writes on a large fleet never queues hashes.
	busy atomic.Bool
	// sync hashes on the apply path (tests and benchmarks).
	sync bool
}

func newHasher(every uint64) *hasher {
	if every == 0 {
		every = DefaultHashEvery
	}
	return &hasher{every: every, stepHosts: hashStepHosts}
}

// maybeCapture is called with f.mu held after entry index was applied.
func (h *hasher) maybeCapture(f *FSM, index uint64) {
	if h == nil {
		return
	}
	every := h.interval(len(f.s.Hosts))
	crossed := index/every > h.prev/every
	h.prev = index
	if !crossed {
		return
	}
	if h.sync {
		h.record(StateHash{Index: index, Sum: f.snapshotLocked().sum()})
		return
	}
	if !h.busy.CompareAndSwap(false, true) {
		return
	}
	snap := f.snapshotLocked()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer h.busy.Store(false)
		h.record(StateHash{Index: index, Sum: snap.sum()})
	}()
}

// interval is the hash interval, in entries, at a fleet of hosts hosts
// (hashStepHosts): HashEvery doubled once per doubling of the fleet above
// stepHosts, at most hashMaxScale times HashEvery.
func (h *hasher) interval(hosts int) uint64 {
	every := h.every
	for n, scale := h.stepHosts, 1; hosts > n && scale < hashMaxScale && every <= math.MaxUint64/2; n, scale = n*2, scale*2 {
		every *= 2
	}
	return every
}

func (h *hasher) record(s StateHash) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, found := slices.BinarySearchFunc(h.recent, s.Index, func(a StateHash, idx uint64) int {
		switch {
		case a.Index < idx:
			return -1
		case a.Index > idx:
			return 1
		}
		return 0
	})
	if found {
		h.recent[i] = s
		return
	}
	h.recent = slices.Insert(h.recent, i, s)
	if len(h.recent) > keepHashes {
		h.recent = h.recent[len(h.recent)-keepHashes:]
	}
}

// restored resets the boundary after a snapshot restore at index.
func (h *hasher) restored(index uint64) {
	if h != nil {
		h.prev = index
	}
}

// StateHashes returns this member's recent state hashes, oldest first.
func (f *FSM) StateHashes() []StateHash {
	f.hashes.mu.Lock()
	defer f.hashes.mu.Unlock()
	return slices.Clone(f.hashes.recent)
}

// sum hashes the captured state. Everything every member's FSM holds
// alike is covered: cluster ID, members' API URLs, hosts (spec, status,
// intents, events), racks (leases, history, tombstones), credentials and
// tokens. The member version table is not: it is advisory, re-recorded
// by the leader, and absent from members that restored a snapshot an
// older binary wrote.
func (s *Snapshot) sum() string {
	d := sha256.New()
	enc := json.NewEncoder(d)
	put := func(tag string, v any) {
		d.Write([]byte(tag))
		if err := enc.Encode(v); err != nil {
			// Every value here was encoded into a snapshot before; a
			// failure would be a programming error, so it shows in the hash.
			d.Write([]byte("!" + err.Error()))
		}
	}
	put("cluster", s.meta.ClusterID)
	put("members", s.meta.Members) // encoding/json sorts map keys
	put("creds", s.meta.Creds)
	put("tokens", s.meta.Tokens)
	put("racks", s.meta.Racks)
	hosts := slices.Clone(s.hosts)
	slices.SortFunc(hosts, func(a, b *hostEntry) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	for _, h := range hosts {
		put("host", h.full())
	}
	return hex.EncodeToString(d.Sum(nil))
}
