package coordinator

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// truncateTailAndReopen stores entries 1..5, truncates the tail (5), as
// Raft does when a new leader overwrites a follower's uncommitted entry
// ("clearing log suffix"), closes the stores and opens them again.
func truncateTailAndReopen(t *testing.T, kind string) (*raftStores, error) {
	t.Helper()
	dir := t.TempDir()
	st, err := openRaftStores(dir, kind, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 5; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Data: []byte("x")})
	}
	if err := st.logs.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := st.logs.DeleteRange(5, 5); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return openRaftStores(dir, kind, hclog.NewNullLogger())
}

// TestLogTailTruncationThenRestart: with bolt (and auto, which creates
// bolt) a member reads its log after a tail truncation and a restart.
// raft-wal v0.4.0 cannot (its fault, see LogStoreWAL): the open is refused
// with ErrLogUnreadable and what to do, instead of raft.NewRaft panicking
// at every start (the chaos campaign's seed 108 found it that way).
func TestLogTailTruncationThenRestart(t *testing.T) {
	for _, kind := range []string{LogStoreBolt, LogStoreAuto} {
		st, err := truncateTailAndReopen(t, kind)
		if err != nil {
			t.Fatalf("%s: reopen after a tail truncation: %v", kind, err)
		}
		var l raft.Log
		if last, _ := st.logs.LastIndex(); last != 4 || st.logs.GetLog(1, &l) != nil || st.logs.GetLog(4, &l) != nil {
			t.Fatalf("%s: last index %d after truncating 5, or an entry unreadable", kind, last)
		}
		if st.wal != nil {
			t.Fatalf("%s created a raft-wal log for a new data dir", kind)
		}
		st.Close()
	}
	_, err := truncateTailAndReopen(t, LogStoreWAL)
	if !errors.Is(err, ErrLogUnreadable) || !strings.Contains(err.Error(), "join it again with an empty data dir") {
		t.Fatalf("wal after a tail truncation: %v; want ErrLogUnreadable saying what to do", err)
	}
}
