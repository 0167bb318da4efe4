package coordinator

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestOpenFailureClosesWhatItOpened: an Open that fails after it opened
// the log store and listened for Raft (raft refuses a lease timeout longer
// than the heartbeat timeout) leaves neither open: the Raft port can be
// listened on again and the next Open of the same data dir starts (a
// raft.db still locked would make it fail after bolt's 5 s wait).
func TestOpenFailureClosesWhatItOpened(t *testing.T) {
	port := testenv.FreePort(t, "127.0.0.1")
	cfg := Config{NodeID: "n1", DataDir: t.TempDir(), Bootstrap: true, HTTPURL: "http://127.0.0.1:1",
		RaftAddr: fmt.Sprintf("127.0.0.1:%d", port), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		HeartbeatTimeout: time.Second, LeaderLeaseTimeout: 2 * time.Second}
	if s, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "start raft") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open with a lease timeout over the heartbeat timeout: %v, want raft's refusal", err)
	}
	ln, err := net.Listen("tcp", cfg.RaftAddr)
	if err != nil {
		t.Fatalf("the Raft port is still taken after the failed Open: %v", err)
	}
	ln.Close()
	cfg.LeaderLeaseTimeout = 0
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open after a failed Open of the same data dir: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
