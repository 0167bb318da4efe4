package coordinator

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// Open starts a member from cfg.DataDir, bootstrapping a cluster of one when
// cfg.Bootstrap is set and the data dir holds no Raft state. When it fails
// it closes whatever it opened (Close: the log store, the transport's
// listener, Raft), so the data dir and the Raft port are free again.
func Open(cfg Config) (_ *Store, err error) {
	cfg.applyDefaults()
	if err := prepareDataDir(cfg); err != nil {
		return nil, err
	}
	s := newStore(cfg)
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	rc := raftConfig(cfg, s.notifyCh)
	if s.stores, err = openRaftStores(cfg.DataDir, cfg.LogStore, rc.Logger); err != nil {
		return nil, err
	}
	logs := newLogCache(watchedLogs{LogStore: s.stores.logs, w: s.logw})
	if s.snaps, err = openSnapshots(cfg.DataDir, s.stores.logs, rc.Logger); err != nil {
		return nil, err
	}
	if s.trans, err = openTransport(cfg, s.log, rc.Logger); err != nil {
		return nil, err
	}
	s.loadBackupRecord()

	existing, err := raft.HasExistingState(logs, s.stores.stable, s.snaps)
	if err != nil {
		return nil, err
	}
	if s.raft, err = raft.NewRaft(rc, raftFSM{s.fsm}, logs, s.stores.stable, s.snaps, unpipelined{s.trans}); err != nil {
		return nil, fmt.Errorf("start raft: %w", err)
	}
	if cfg.Bootstrap && !existing {
		s.log.Info("bootstrapping a new cluster of one", "node", cfg.NodeID, "raft", cfg.RaftAddr)
		f := s.raft.BootstrapCluster(raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: s.trans.LocalAddr()}}})
		if err := f.Error(); err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
			return nil, fmt.Errorf("bootstrap: %w", err)
		}
	}
	s.batch = newBatcher(s.raft, cfg.MaxBatch, cfg.ApplyTimeout, cfg.Metrics, s.compressEntry)
	go s.deferElections(s.raft.ReloadableConfig())
	go s.leaderLoop()
	go s.touchLoop()
	go s.peerLoop()
	go s.shutdownWhenStopped()
	return s, nil
}

// prepareDataDir checks the node ID, creates the data dir owner-only, makes
// what is in it owner-only, and refuses one a member cannot start from
// (CheckDataDir).
func prepareDataDir(cfg Config) error {
	if cfg.NodeID == "" {
		return errors.New("node ID is empty: set --node-id")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir %s: %w", cfg.DataDir, err)
	}
	if n, err := SecureDataDir(cfg.DataDir); err != nil {
		return fmt.Errorf("data dir %s: %w", cfg.DataDir, err)
	} else if n > 0 {
		cfg.Logger.Info("made data dir files owner-only (0600, directories 0700)", "dataDir", cfg.DataDir, "changed", n)
	}
	return CheckDataDir(cfg.DataDir)
}

// newStore is a member not yet started: its FSM, with the hooks that hand
// the store what the FSM observes, and the lease timers.
func newStore(cfg Config) *Store {
	s := &Store{cfg: cfg, log: cfg.Logger, notifyCh: make(chan bool, 16), closing: make(chan struct{}), stopCh: make(chan struct{})}
	s.timers = newLeaseTimers(s)
	s.divergence = newDivergence()
	s.logw = newLogWrites(cfg.DataDir, s.log)
	o := fsm.Options{OnLease: s.timers.changed, OnStop: s.stopApplying, HashEvery: cfg.HashEvery, Commands: cfg.commands}
	if cfg.Metrics != nil {
		o.OnApply = cfg.Metrics.observeApply
	}
	s.fsm = fsm.New(o)
	return s
}

// raftConfig is raft's configuration for cfg: raft's defaults, with the
// timings cfg sets, leadership changes on notify and JSON logs on stderr.
func raftConfig(cfg Config, notify chan bool) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.NodeID)
	rc.NotifyCh = notify
	rc.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(cfg.RaftLogLevel), Output: os.Stderr, JSONFormat: true})
	override(&rc.HeartbeatTimeout, cfg.HeartbeatTimeout)
	override(&rc.ElectionTimeout, cfg.ElectionTimeout)
	override(&rc.LeaderLeaseTimeout, cfg.LeaderLeaseTimeout)
	override(&rc.SnapshotThreshold, cfg.SnapshotThreshold)
	override(&rc.SnapshotInterval, cfg.SnapshotInterval)
	override(&rc.TrailingLogs, cfg.TrailingLogs)
	return rc
}

// override sets *dst to v when v is set (above zero).
func override[T time.Duration | uint64](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

// openSnapshots opens the snapshot store (2 kept), refuses snapshots the
// log cannot follow (checkSnapshots) and keeps new ones owner-only.
func openSnapshots(dataDir string, logs raft.LogStore, logger hclog.Logger) (*secureSnapshots, error) {
	fileSnaps, err := raft.NewFileSnapshotStoreWithLogger(dataDir, 2, logger)
	if err != nil {
		return nil, fmt.Errorf("snapshot store in %s: %w", dataDir, err)
	}
	if _, err := checkSnapshots(dataDir, logs, fileSnaps); err != nil {
		return nil, err
	}
	snaps := &secureSnapshots{FileSnapshotStore: fileSnaps, dir: filepath.Join(dataDir, "snapshots")}
	if _, err := SecureDataDir(snaps.dir); err != nil {
		return nil, err
	}
	return snaps, nil
}

// openTransport listens for Raft on cfg.RaftAddr: over mutual TLS when
// cfg.RaftTLS is set, plain TCP otherwise (8 pooled connections a peer,
// 10 s timeout).
func openTransport(cfg Config, log *slog.Logger, logger hclog.Logger) (*raft.NetworkTransport, error) {
	addr, err := net.ResolveTCPAddr("tcp", cfg.RaftAddr)
	if err != nil {
		return nil, fmt.Errorf("raft address %q: %w", cfg.RaftAddr, err)
	}
	if cfg.RaftTLS == nil {
		trans, err := raft.NewTCPTransportWithLogger(cfg.RaftAddr, addr, 8, 10*time.Second, logger)
		if err != nil {
			return nil, fmt.Errorf("listen for raft on %s: %w", cfg.RaftAddr, err)
		}
		return trans, nil
	}
	stream, err := newTLSStream(cfg.RaftAddr, addr, cfg.RaftTLS, log)
	if err != nil {
		return nil, fmt.Errorf("listen for raft (TLS) on %s: %w", cfg.RaftAddr, err)
	}
	return raft.NewNetworkTransportWithLogger(stream, 8, 10*time.Second, logger), nil
}
