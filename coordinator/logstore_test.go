package coordinator

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The stores close completely: opening the same data dir again in the
// same process must not block on a file lock left by the first open
// (raft-wal v0.4.0's WAL.Close leaves its meta database open).
func TestRaftStoresReopenInProcess(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		done := make(chan error, 1)
		go func() {
			st, err := openRaftStores(dir, LogStoreWAL, hclog.NewNullLogger())
			if err == nil {
				err = st.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("open %d: %v", i, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("open %d of the same data dir blocked for 30 s (a store left open)", i)
		}
	}
}
