package coordinator

import (
	"sync"

	"github.com/hashicorp/raft"
)

// The Raft log cache keeps the newest entries in memory so the leader
// replicates them to followers without reading the log store. It is
// bounded by count and by bytes: raft.NewLogCache(1024) bounds only the
// count, and while 10,000 hosts register an entry is a batch of rack
// status reports with hardware details (12 KB on average, up to 1 MB), so
// its 1,024 entries held 20 MB — 40 % of the coordinator's live heap.
//
// Since large entries are written compressed (fsm.CmdCompressed) the
// count bounds it: 1,024 compressed entries were objects of every size
// freed oldest first among the FSM's long-lived ones, and at 10,000 hosts
// they left the Go heap's resident pages 8 MB larger than the entries
// themselves (half-empty spans). At 256 the coordinator's RSS peak there
// fell by a tenth, and writes against etcd did not change.
const (
	// logCacheEntries is the most entries the cache holds. A follower
	// further behind (raft replicates at most 64 entries per request)
	// reads them from the log store, compressed when they are large.
	logCacheEntries = 256
	// logCacheBytes is the most entry bytes (Data + Extensions) it holds.
	// While hosts register, entries are compressed batches of rack
	// reports (at most fsm's 1 MiB of commands each, some 150 KB
	// deflated), so 4 MiB of them filled the cache and stayed live
	// heap at the coordinator's peak; 1 MiB still holds the last few
	// such entries, and every small entry of the steady traffic.
	logCacheBytes = 1 << 20
)

// logCache is a raft.LogStore that keeps a contiguous run of the newest
// entries (at most logCacheEntries and logCacheBytes) in front of store.
// Entries are shared, never copied or modified: raft does the same with
// raft.LogCache.
type logCache struct {
	store raft.LogStore

	mu    sync.RWMutex
	logs  []*raft.Log // indexes logs[0].Index, logs[0].Index+1, …
	bytes int
}

func newLogCache(store raft.LogStore) *logCache { return &logCache{store: store} }

func logBytes(l *raft.Log) int { return len(l.Data) + len(l.Extensions) }

// GetLog answers from the cache when it holds idx, else from the store.
func (c *logCache) GetLog(idx uint64, out *raft.Log) error {
	c.mu.RLock()
	if n := len(c.logs); n > 0 {
		if first := c.logs[0].Index; idx >= first && idx-first < uint64(n) {
			*out = *c.logs[idx-first]
			c.mu.RUnlock()
			return nil
		}
	}
	c.mu.RUnlock()
	return c.store.GetLog(idx, out)
}

// StoreLog stores one entry.
func (c *logCache) StoreLog(l *raft.Log) error { return c.StoreLogs([]*raft.Log{l}) }

// StoreLogs writes logs to the store, then caches them. On an error the
// cache is emptied: what the store holds is then unknown.
func (c *logCache) StoreLogs(logs []*raft.Log) error {
	if err := c.store.StoreLogs(logs); err != nil {
		c.reset()
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range logs {
		if n := len(c.logs); n > 0 && c.logs[n-1].Index+1 != l.Index {
			c.logs, c.bytes = nil, 0 // not contiguous (raft rewrote the tail)
		}
		c.logs = append(c.logs, l)
		c.bytes += logBytes(l)
	}
	for len(c.logs) > 1 && (len(c.logs) > logCacheEntries || c.bytes > logCacheBytes) {
		c.bytes -= logBytes(c.logs[0])
		c.logs[0] = nil // let the dropped entry go before append reallocates
		c.logs = c.logs[1:]
	}
	return nil
}

// DeleteRange empties the cache (raft deletes a prefix after a snapshot
// and a suffix when a new leader overwrites entries) and deletes from the
// store.
func (c *logCache) DeleteRange(min, max uint64) error {
	c.reset()
	return c.store.DeleteRange(min, max)
}

// FirstIndex is the store's.
func (c *logCache) FirstIndex() (uint64, error) { return c.store.FirstIndex() }

// LastIndex is the store's.
func (c *logCache) LastIndex() (uint64, error) { return c.store.LastIndex() }

func (c *logCache) reset() {
	c.mu.Lock()
	c.logs, c.bytes = nil, 0
	c.mu.Unlock()
}
