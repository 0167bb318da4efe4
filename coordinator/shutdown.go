package coordinator

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// DefaultStopTimeout is --stop-timeout's default: the most a member takes
// from SIGTERM to exit. It stays below the systemd unit's TimeoutStopSec
// (30s, systemd/rackfence-coordinator.service) so the member ends by itself
// before systemd's SIGKILL.
const DefaultStopTimeout = 20 * time.Second

// HandOver begins a stop: from now on Apply refuses writes with
// ErrShutdown, and when this member leads a cluster of more than one voter
// it hands leadership to the most up-to-date other voter (raft's
// LeadershipTransfer), waiting at most until ctx ends. It returns the new
// leader's ID ("" when this member did not lead, or when the transfer
// finished but no heartbeat of the new leader arrived before ctx ended);
// an error says why no hand-over happened.
func (s *Store) HandOver(ctx context.Context) (string, error) {
	s.stopping.Store(true)
	if !s.IsLeader() {
		return "", nil
	}
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return "", fmt.Errorf("read the configuration: %w", err)
	}
	voters := 0
	for _, srv := range cf.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			voters++
		}
	}
	if voters < 2 {
		return "", nil
	}
	f := s.raft.LeadershipTransfer()
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		if err != nil {
			return "", fmt.Errorf("leadership transfer: %w", err)
		}
	case <-ctx.Done():
		return "", fmt.Errorf("leadership transfer not finished: %w", ctx.Err())
	}
	// This member learns the new leader from its first heartbeat.
	for {
		if _, id := s.raft.LeaderWithID(); id != "" && string(id) != s.cfg.NodeID {
			return string(id), nil
		}
		select {
		case <-ctx.Done():
			return "", nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Shutdown shuts Raft down and closes the stores, waiting at most until
// ctx ends. When ctx ends first it returns a *StuckError naming what Raft
// still waits for; the close goes on in the background and the caller may
// exit the process anyway: every Raft log and stable-store write was
// fsynced when it returned, and bolt (and raft-wal) recover from a process
// that ends without closing them as from a crash, so nothing acknowledged
// is lost. Later calls wait for the same close.
func (s *Store) Shutdown(ctx context.Context) error {
	s.closed.Do(func() {
		s.stopping.Store(true)
		s.closeDone = make(chan struct{})
		go func() {
			s.closeErr = s.close()
			close(s.closeDone)
		}()
	})
	start := time.Now()
	select {
	case <-s.closeDone:
		return s.closeErr
	case <-ctx.Done():
		waiting := raftGoroutines()
		select {
		case <-s.closeDone:
			// The close ended while the goroutines were listed: not stuck.
			return s.closeErr
		default:
		}
		return &StuckError{Waited: time.Since(start), Waiting: waiting}
	}
}

// Close shuts Raft down and closes the stores, without a bound (tools and
// tests; the daemon's stop uses Shutdown).
func (s *Store) Close() error { return s.Shutdown(context.Background()) }

// raftGoroutines names the innermost hashicorp/raft function of every
// goroutine that has one, "NAME ×N" when N goroutines share it, sorted.
func raftGoroutines() []string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		return []string{"(goroutine dump failed: " + err.Error() + ")"}
	}
	counts := map[string]int{}
	for _, g := range strings.Split(buf.String(), "\n\n") {
		for _, line := range strings.Split(g, "\n") {
			if !strings.HasPrefix(line, "github.com/hashicorp/raft.") {
				continue
			}
			fn := strings.TrimPrefix(line, "github.com/hashicorp/")
			if i := strings.LastIndex(fn, "("); i > 0 {
				fn = fn[:i]
			}
			counts[fn]++
			break
		}
	}
	out := make([]string, 0, len(counts))
	for fn, n := range counts {
		if n > 1 {
			fn = fmt.Sprintf("%s ×%d", fn, n)
		}
		out = append(out, fn)
	}
	sort.Strings(out)
	return out
}
