package coordinator

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// countingStore counts GetLog calls that reach the store.
type countingStore struct {
	raft.LogStore
	gets int
	fail error
}

func (s *countingStore) GetLog(idx uint64, out *raft.Log) error {
	s.gets++
	return s.LogStore.GetLog(idx, out)
}

func (s *countingStore) StoreLogs(logs []*raft.Log) error {
	if s.fail != nil {
		return s.fail
	}
	return s.LogStore.StoreLogs(logs)
}

func entries(from, n uint64, size int) []*raft.Log {
	var out []*raft.Log
	for i := from; i < from+n; i++ {
		out = append(out, &raft.Log{Index: i, Term: 1, Data: bytes.Repeat([]byte{byte(i)}, size)})
	}
	return out
}

func TestLogCacheBoundedByBytes(t *testing.T) {
	st := &countingStore{LogStore: raft.NewInmemStore()}
	c := newLogCache(st)
	// 100 entries of 256 KiB: only the newest 4 (1 MiB) stay cached.
	for _, l := range entries(1, 100, 256<<10) {
		if err := c.StoreLog(l); err != nil {
			t.Fatal(err)
		}
	}
	if c.bytes > logCacheBytes {
		t.Fatalf("cache holds %d bytes, bound %d", c.bytes, logCacheBytes)
	}
	if got, want := len(c.logs), 4; got != want {
		t.Fatalf("cache holds %d entries, want %d", got, want)
	}
	var l raft.Log
	for i := uint64(97); i <= 100; i++ {
		if err := c.GetLog(i, &l); err != nil || l.Index != i || l.Data[0] != byte(i) {
			t.Fatalf("GetLog(%d) = %d %v", i, l.Index, err)
		}
	}
	if st.gets != 0 {
		t.Fatalf("the newest 4 entries reached the store %d times", st.gets)
	}
	if err := c.GetLog(3, &l); err != nil || l.Index != 3 || l.Data[0] != 3 {
		t.Fatalf("GetLog(3) from the store = %d %v", l.Index, err)
	}
	if st.gets != 1 {
		t.Fatalf("an evicted entry was not read from the store (%d reads)", st.gets)
	}
}

func TestLogCacheBoundedByCount(t *testing.T) {
	c := newLogCache(raft.NewInmemStore())
	if err := c.StoreLogs(entries(1, 3000, 10)); err != nil {
		t.Fatal(err)
	}
	if len(c.logs) != logCacheEntries || c.logs[0].Index != 3001-logCacheEntries {
		t.Fatalf("cache holds %d entries from %d", len(c.logs), c.logs[0].Index)
	}
	// One entry larger than the byte bound is still cached, alone.
	if err := c.StoreLogs(entries(3001, 1, logCacheBytes+1)); err != nil {
		t.Fatal(err)
	}
	if len(c.logs) != 1 || c.logs[0].Index != 3001 {
		t.Fatalf("after a huge entry the cache holds %d entries", len(c.logs))
	}
}

func TestLogCacheRewrittenTail(t *testing.T) {
	st := &countingStore{LogStore: raft.NewInmemStore()}
	c := newLogCache(st)
	if err := c.StoreLogs(entries(1, 10, 1)); err != nil {
		t.Fatal(err)
	}
	// A new leader overwrites 6..10: raft deletes the suffix first.
	if err := c.DeleteRange(6, 10); err != nil {
		t.Fatal(err)
	}
	fresh := entries(6, 2, 1)
	fresh[0].Data[0], fresh[1].Data[0] = 0xee, 0xef
	if err := c.StoreLogs(fresh); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	if err := c.GetLog(6, &l); err != nil || l.Data[0] != 0xee {
		t.Fatalf("GetLog(6) after the rewrite = %x %v", l.Data, err)
	}
	if err := c.GetLog(8, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("GetLog(8) after the rewrite: %v, want ErrLogNotFound", err)
	}
	// A failed write empties the cache.
	st.fail = errors.New("disk full")
	if err := c.StoreLogs(entries(8, 1, 1)); err == nil {
		t.Fatal("a failed store write was not reported")
	}
	if len(c.logs) != 0 {
		t.Fatalf("the cache kept %d entries after a failed write", len(c.logs))
	}
}
