package coordinator

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// Store is one coordinator member: Raft, the FSM, the write batcher and the
// leader's lease timers.
type Store struct {
	cfg    Config
	log    *slog.Logger
	fsm    *fsm.FSM
	raft   *raft.Raft
	trans  *raft.NetworkTransport
	stores *raftStores
	snaps  *secureSnapshots
	batch  *batcher
	timers *leaseTimers

	notifyCh chan bool
	closing  chan struct{}
	closed   sync.Once
	// closeDone is closed when close (run once, by Shutdown) returned
	// closeErr.
	closeDone chan struct{}
	closeErr  error
	// stopping is set when a stop began (HandOver, Shutdown): Apply
	// refuses new writes with ErrShutdown.
	stopping atomic.Bool
	// ready is set once this node, as leader, passed its barrier and
	// re-armed the lease timers; reads wait for it.
	ready atomic.Bool
	gen   atomic.Uint64
	// uses are token uses seen here, not yet written (see tokens.go).
	uses tokenUses

	// Version gate and divergence check (gate.go, peers.go, divergence.go).
	voters     atomic.Pointer[[]string]
	gateCache  atomic.Pointer[clusterTable]
	probes     probes
	divergence *divergence
	// stopCh is closed when the FSM stops at an entry it cannot apply.
	stopCh   chan struct{}
	stopOnce sync.Once
	// lastBackup is the last backup this member served (backup_record.go).
	lastBackup atomic.Pointer[BackupRecord]
	// logw records whether this member can write its Raft log (logwrite.go).
	logw *logWrites
}

// HasState reports whether dataDir already holds Raft state (so a restarted
// node neither bootstraps nor joins).
func HasState(dataDir string) bool {
	_, err := os.Stat(filepath.Join(dataDir, "raft.db"))
	return err == nil
}

// FSM returns the state machine (for reads).
func (s *Store) FSM() *fsm.FSM { return s.fsm }

// NodeID is this member's ID.
func (s *Store) NodeID() string { return s.cfg.NodeID }

// HTTPURL is this member's API URL.
func (s *Store) HTTPURL() string { return s.cfg.HTTPURL }

// DataDir is this member's data directory.
func (s *Store) DataDir() string { return s.cfg.DataDir }

// IsLeader reports whether this node is the leader.
func (s *Store) IsLeader() bool { return s.raft.State() == raft.Leader }

// Ready reports whether this node leads and has finished taking over
// (barrier passed, lease timers re-armed).
func (s *Store) Ready() bool { return s.IsLeader() && s.ready.Load() && s.fsm.Stopped() == nil }

// State is the Raft state in lower case: leader, follower, candidate, shutdown.
func (s *Store) State() string { return strings.ToLower(s.raft.State().String()) }

// Leader returns the leader's ID and API URL ("" when unknown).
func (s *Store) Leader() (id, httpURL string) {
	_, lid := s.raft.LeaderWithID()
	if lid == "" {
		return "", ""
	}
	id = string(lid)
	if id == s.cfg.NodeID {
		return id, s.cfg.HTTPURL
	}
	return id, s.fsm.MemberHTTP(id)
}

// Apply submits one command on the leader and returns its result value or
// its refusal (*Error), ErrNotLeader when this node does not lead (nothing
// was submitted), ErrOutcomeUnknown (wrapping the context's error when ctx
// ended) when it was submitted but may or may not be applied.
func (s *Store) Apply(ctx context.Context, c fsm.Command) (any, error) {
	if s.stopping.Load() {
		return nil, ErrShutdown
	}
	if !s.IsLeader() {
		return nil, ErrNotLeader
	}
	c = s.commandForm(s.statusForm(c))
	data, err := fsm.Encode(c)
	if err != nil {
		return nil, err
	}
	if err := s.gate(data); err != nil {
		return nil, err
	}
	start := time.Now()
	defer func() {
		if s.cfg.Metrics != nil {
			s.cfg.Metrics.applyLatency.Observe(time.Since(start).Seconds())
		}
	}()
	// A lone write (nothing queued or in flight) goes straight to raft
	// from this goroutine: two fewer hand-offs on the latency path.
	if s.batch.active.CompareAndSwap(0, 1) {
		r := s.batch.direct(data)
		return r.Value, r.Err
	}
	q := s.batch.queue(c.Type())
	if s.batch.shed(q) {
		// The queue is older than the apply timeout: this write would
		// time out before its turn. Refused before it is queued, so it
		// was not applied and the client can repeat it later. (A lease
		// command is never refused so: it goes ahead of the queue.)
		s.cfg.Metrics.observeShed()
		return nil, ErrBusy
	}
	s.batch.active.Add(1)
	p := &pending{key: c.Key(), data: data, done: make(chan fsm.Result, 1), ctx: ctx, queued: time.Now()}
	select {
	case q <- p:
	case <-ctx.Done():
		s.batch.active.Add(-1)
		return nil, ctx.Err()
	case <-s.closing:
		s.batch.active.Add(-1)
		return nil, ErrShutdown
	}
	select {
	case r := <-p.done:
		return r.Value, r.Err
	case <-ctx.Done():
		// Queued for the batcher: it may already be in the Raft log, or
		// the batcher drops it unapplied (batcher.take).
		return nil, fmt.Errorf("%w: %w", ErrOutcomeUnknown, ctx.Err())
	}
}

// ReadBarrier makes the next read linearizable: this node must be the
// leader (confirmed by a quorum) and its FSM must have applied everything
// committed before the call.
func (s *Store) ReadBarrier(ctx context.Context) error {
	if err := s.waitReady(ctx); err != nil {
		return err
	}
	idx := s.raft.CommitIndex()
	if err := s.raft.VerifyLeader().Error(); err != nil {
		return mapRaftErr(err)
	}
	return s.fsm.WaitApplied(ctx, idx)
}

// waitReady returns once this node leads and finished taking over. A
// leader still taking over (barrier, no-op: it already accepts writes)
// is waited for, so a client that has just written here can read here;
// a node that does not lead, or stopped applying, is refused at once.
func (s *Store) waitReady(ctx context.Context) error {
	for !s.Ready() {
		if !s.IsLeader() || s.fsm.Stopped() != nil || s.stopping.Load() {
			return ErrNotLeader
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// WaitLeader waits until the cluster has a leader this node knows.
func (s *Store) WaitLeader(ctx context.Context) error {
	for {
		if id, u := s.Leader(); id != "" && u != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// snapshotIfBehind takes a snapshot before a graceful shutdown when many
// entries were applied since the last one, so the restart restores it
// instead of replaying the log.
func (s *Store) snapshotIfBehind() {
	if s.raft == nil {
		return
	}
	st := s.raft.Stats()
	last, _ := strconv.ParseUint(st["last_snapshot_index"], 10, 64)
	applied, _ := strconv.ParseUint(st["applied_index"], 10, 64)
	if applied < last+256 {
		return
	}
	start := time.Now()
	if err := s.raft.Snapshot().Error(); err != nil {
		s.log.Warn("snapshot before shutdown failed", "err", err)
		return
	}
	s.log.Info("snapshot taken before shutdown", "index", applied, "took", time.Since(start).String())
}

// close shuts Raft down and closes the stores; Shutdown runs it once.
func (s *Store) close() error {
	close(s.closing)
	s.timers.stopAll()
	if s.fsm.Stopped() == nil {
		s.snapshotIfBehind()
	}
	var err error
	if s.raft != nil {
		err = s.raft.Shutdown().Error()
	}
	if s.batch != nil {
		close(s.batch.stop)
	}
	if s.trans != nil {
		s.trans.Close()
	}
	if s.stores != nil {
		s.stores.Close()
	}
	return err
}
