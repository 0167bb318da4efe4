package coordinator

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/seal"
)

// Defaults of Config, and of rackfence-coordinator's flags (its flags.go
// takes them from here, so a default is written once).
const (
	// DefaultMaxBatch is the most commands the leader packs into one Raft
	// log entry (--max-batch).
	DefaultMaxBatch = 512
	// DefaultApplyTimeout bounds how long a write waits for commit.
	DefaultApplyTimeout = 10 * time.Second
	// DefaultSnapshotThreshold is how many log entries trigger a snapshot
	// (raft's own is 8192).
	DefaultSnapshotThreshold = 4096
	// DefaultSnapshotInterval is how often raft checks for a snapshot
	// (raft's own is 2m).
	DefaultSnapshotInterval = 30 * time.Second
	// DefaultTrailingLogs is how many log entries a snapshot leaves behind
	// (raft's own default; --raft-trailing-logs).
	DefaultTrailingLogs = 10240
	// DefaultTouchInterval is how often the leader writes token last-use
	// times.
	DefaultTouchInterval = 30 * time.Second
	// DefaultRaftLogLevel is hashicorp/raft's log level (--raft-log-level).
	DefaultRaftLogLevel = "warn"
	// DefaultLogStore is where the Raft log lives (--raft-log-store).
	DefaultLogStore = LogStoreAuto
	// DefaultDataDir is --data-dir's default.
	DefaultDataDir = "./rackfence-data"
	// DefaultHTTPAddr is the API's listen address (--http-addr); the API
	// and /metrics share it.
	DefaultHTTPAddr = "127.0.0.1:7480"
	// DefaultRaftAddr is the Raft transport's address (--raft-addr).
	DefaultRaftAddr = "127.0.0.1:7481"
	// DefaultTier is this cluster's tier name (--tier).
	DefaultTier = "default"
)

// Config configures a Store. Zero values take the documented defaults.
type Config struct {
	// NodeID is this member's Raft server ID (unique in the cluster).
	NodeID string
	// DataDir holds raft.db (the bolt stable store, and the log with
	// LogStore "bolt"), wal/ (the log with LogStore "wal"), snapshots/ and,
	// on the bootstrapping node, admin.token.
	DataDir string
	// LogStore is where the Raft log lives: LogStoreAuto ("auto", the
	// default: the store the data dir was written with, bolt for a new
	// one), LogStoreBolt ("bolt": raft.db, two fdatasyncs per append) or
	// LogStoreWAL ("wal": hashicorp/raft-wal segment files in DataDir/wal,
	// one fsync of a preallocated file per append; see its caveat at
	// LogStoreWAL: a member that truncated its log tail cannot restart). It is fixed for the life of
	// a data dir: Open refuses a data dir whose log the other store wrote
	// (ErrLogStoreMismatch) rather than start from an empty log. To switch
	// a member, remove it from the cluster, move its data dir away and
	// join it again with the new store (it receives a snapshot).
	// raft-wal caveats: it preallocates 64 MiB segment files (even a
	// small cluster uses 64 MiB+ of disk for the log), creates them 0644
	// (the data dir itself is 0700), and is a pre-1.0 module (pinned at
	// v0.4.0 here) whose on-disk format a later release may change.
	LogStore string
	// HTTPURL is this member's API URL as other members and clients reach
	// it, e.g. http://127.0.0.1:7480; it is stored in the FSM so any
	// member can name the leader's API.
	HTTPURL string
	// RaftAddr is the TCP address the Raft transport binds and advertises.
	RaftAddr string
	// RaftTLS, when set, makes the Raft transport mutual TLS between
	// members; nil is plain TCP (--insecure-plaintext only: then any
	// process that reaches the port can speak Raft to the cluster).
	RaftTLS *RaftTLS
	// TokenPin is the CA fingerprint written into admin.token at
	// bootstrap (api.FormatToken), so the token alone lets a client or a
	// joining member trust the cluster; "" writes the bare secret.
	TokenPin string
	// Bootstrap starts a new cluster of one when the data dir holds no
	// Raft state. Ignored when state exists.
	Bootstrap bool
	// Logger receives structured logs; nil = slog.Default().
	Logger *slog.Logger
	// RaftLogLevel is hashicorp/raft's log level (hclog names); "" = warn.
	RaftLogLevel string

	// HeartbeatTimeout, ElectionTimeout and LeaderLeaseTimeout override
	// hashicorp/raft's defaults (1s, 1s, 500ms) when > 0. On a loaded
	// 2-core machine keep them at the defaults or above.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// SnapshotThreshold is how many log entries trigger a snapshot
	// (default 4096, raft's own is 8192); SnapshotInterval how often raft checks (default 30s,
	// raft's own is 2m: with batching an entry carries many writes, and a
	// restart replays everything after the last snapshot).
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	// TrailingLogs is how many log entries a snapshot leaves behind
	// (default 10240) so slow followers can catch up without a snapshot.
	TrailingLogs uint64
	// ApplyTimeout bounds how long a write waits for commit (default 10s).
	ApplyTimeout time.Duration
	// MaxBatch is the most commands the leader packs into one Raft log
	// entry (DefaultMaxBatch when zero; 1 disables batching).
	MaxBatch int
	// Metrics receives the store's figures; nil = none.
	Metrics *Metrics
	// TouchInterval is how often the leader writes the tokens' last-use
	// times it saw (one TouchTokensCmd, only when one moved by a minute or
	// more); default 30s.
	TouchInterval time.Duration
	// Secrets holds the keys that seal credentials passwords (loaded from
	// --secrets-key-file, replaced on SIGHUP). nil or empty: this member
	// can neither store nor reveal sealed passwords, and says so.
	Secrets *seal.Holder

	// Version gate and divergence check (gate.go, peers.go,
	// divergence.go). PeerClient reads other members' GET /v1/health
	// (default: 5s timeout, plain transport; the binary passes its member
	// TLS client). ProbeInterval is how often the leader reads them
	// (default 10s), HashCheckInterval how often it compares state hashes
	// (default 1m), HashEvery how many log entries apart members hash
	// their state (default 1024).
	PeerClient        *http.Client
	ProbeInterval     time.Duration
	HashCheckInterval time.Duration
	HashEvery         uint64

	// commands is what this member applies and reports: nil, this
	// binary's table. Only this package's tests set it (export_test.go),
	// for a member that plays an older binary.
	commands map[fsm.CmdType]byte
}

func (c *Config) applyDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ApplyTimeout <= 0 {
		c.ApplyTimeout = DefaultApplyTimeout
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = DefaultSnapshotThreshold
	}
	if c.SnapshotInterval <= 0 {
		c.SnapshotInterval = DefaultSnapshotInterval
	}
	if c.TouchInterval <= 0 {
		c.TouchInterval = DefaultTouchInterval
	}
	if c.LogStore == "" {
		c.LogStore = DefaultLogStore
	}
	if c.RaftLogLevel == "" {
		c.RaftLogLevel = DefaultRaftLogLevel
	}
	if c.PeerClient == nil {
		c.PeerClient = &http.Client{Timeout: 5 * time.Second}
	}
	if c.ProbeInterval <= 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	if c.HashCheckInterval <= 0 {
		c.HashCheckInterval = DefaultHashCheckInterval
	}
	if c.HashEvery == 0 {
		c.HashEvery = fsm.DefaultHashEvery
	}
}
