package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestStopRefusesWritesAndShutsDown: once a stop began (HandOver) the
// store refuses writes with ErrShutdown; a leader with no other voter
// hands nothing over; Shutdown with a deadline closes it, and again
// returns at once.
func TestStopRefusesWritesAndShutsDown(t *testing.T) {
	testenv.SkipShort(t) // starts a Raft store: seconds
	port := testenv.FreePort(t, "127.0.0.1")
	s, err := Open(Config{NodeID: "n1", DataDir: t.TempDir(), Bootstrap: true, HTTPURL: "http://127.0.0.1:1",
		RaftAddr: fmt.Sprintf("127.0.0.1:%d", port), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "a leader", func() error {
		if !s.Ready() {
			return fmt.Errorf("state %s", s.State())
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if to, err := s.HandOver(ctx); to != "" || err != nil {
		t.Fatalf("HandOver of a cluster of one: %q %v", to, err)
	}
	if _, err := s.Apply(ctx, fsm.NoopCmd{Node: "n1"}); !errors.Is(err, ErrShutdown) {
		t.Fatalf("Apply after HandOver: %v, want ErrShutdown", err)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if s.State() != "shutdown" {
		t.Fatalf("state after Shutdown: %s", s.State())
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
}

// TestStuckErrorNamesRaftGoroutines: a Shutdown whose context already
// ended reports the Raft goroutines still running (here at least the
// transport's listener), and a later Close waits for the close.
func TestStuckErrorNamesRaftGoroutines(t *testing.T) {
	testenv.SkipShort(t)
	port := testenv.FreePort(t, "127.0.0.1")
	s, err := Open(Config{NodeID: "n1", DataDir: t.TempDir(), Bootstrap: true, HTTPURL: "http://127.0.0.1:1",
		RaftAddr: fmt.Sprintf("127.0.0.1:%d", port), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.Shutdown(ctx)
	t.Logf("Shutdown with an ended context: %v", err)
	var stuck *StuckError
	switch {
	case err == nil: // the close won the race: nothing to name
	case errors.As(err, &stuck) && len(stuck.Waiting) == 0:
		// Raft was down when its goroutines were listed; the stores were
		// still closing.
		if !strings.Contains(err.Error(), "raft has shut down") {
			t.Errorf("StuckError with nothing of raft running: %q", err)
		}
	case errors.As(err, &stuck):
		if !strings.HasPrefix(stuck.Waiting[0], "raft.") || !strings.Contains(err.Error(), "raft did not shut down") {
			t.Errorf("StuckError %q names %v", err, stuck.Waiting)
		}
	default:
		t.Fatalf("Shutdown with an ended context: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReadBarrierWaitsForTakeOver: a leader still taking over (its
// barrier and no-op running, writes already accepted) makes a
// linearizable read wait until it is ready, instead of answering 503 to
// a client whose write it has just acknowledged (CI: TestRecoverLostQuorum
// read 503 right after its first write on the recovered member).
func TestReadBarrierWaitsForTakeOver(t *testing.T) {
	testenv.SkipShort(t) // starts a Raft store: seconds
	port := testenv.FreePort(t, "127.0.0.1")
	s, err := Open(Config{NodeID: "n1", DataDir: t.TempDir(), Bootstrap: true, HTTPURL: "http://127.0.0.1:1",
		RaftAddr: fmt.Sprintf("127.0.0.1:%d", port), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	testenv.Eventually(t, 30*time.Second, "a leader", func() error {
		if !s.Ready() {
			return fmt.Errorf("state %s", s.State())
		}
		return nil
	})
	s.ready.Store(false) // as leaderLoop does when leadership begins
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- s.ReadBarrier(ctx)
	}()
	select {
	case err := <-done:
		t.Fatalf("ReadBarrier during the take-over returned at once: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	s.ready.Store(true) // as takeOver does at its end
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ReadBarrier once ready: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ReadBarrier did not return once the leader was ready")
	}
}
