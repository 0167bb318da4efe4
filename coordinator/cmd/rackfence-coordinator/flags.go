package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
)

// Config is rackfence-coordinator's configuration: one field a flag (every
// flag also reads RACKFENCE_<FLAG>, internal/envflag). Defaults come from the
// coordinator and pki packages' Default* constants. --log-level,
// --log-format, --pprof-addr and --version are internal/daemon's.
type Config struct {
	daemon.Common
	// nodeID is the Raft server ID (--node-id, default the hostname). It
	// is kept in DATA/node-id: a restarted member needs none, a different
	// one is refused.
	nodeID string
	// dataDir holds the Raft log, stable store, snapshots, tls/, the
	// secrets key and (bootstrap member) admin.token.
	dataDir string
	// httpAddr is the API and /metrics listen address.
	httpAddr string
	// advertiseHTTP is the API URL others use (default from httpAddr and
	// the scheme); set it when httpAddr is 0.0.0.0 or behind NAT.
	advertiseHTTP string
	// raftAddr is the Raft transport address, bound and advertised.
	raftAddr string
	// bootstrap starts a new cluster of one; when not given it is true for
	// a new data dir with no --join. Excludes --join.
	bootstrap bool
	// join is the HTTP URL of any member; ignored once the data dir has
	// Raft state.
	join string
	// joinTokenFile is the admin token for --join (default RACKFENCE_TOKEN).
	joinTokenFile string
	// tier is this cluster's tier name (pivots).
	tier string
	// peerTiers and peerTokenFiles are NAME=URL and NAME=FILE pairs.
	peerTiers, peerTokenFiles []string
	// insecure serves plain HTTP and plain-TCP Raft: a trusted test network
	// only. Excludes every TLS flag.
	insecure bool
	// caCert and caKey: at bootstrap, the CA to use instead of a new one.
	caCert, caKey string
	// caFile and caFingerprint: with --join, how to trust the cluster CA
	// (default: the pin in the join token).
	caFile, caFingerprint string
	// tlsSANs are extra names of the member certificate.
	tlsSANs []string
	// certValidity is the lifetime of issued certificates (renewed at two
	// thirds); at least 1s.
	certValidity time.Duration
	// tlsCert, tlsKey: serve the API with this certificate (own PKI);
	// tlsClientCA: also require client certificates signed by it.
	tlsCert, tlsKey, tlsClientCA string
	// raftLogLevel is hashicorp/raft's log level (hclog names).
	raftLogLevel string
	// maxBatch is the most writes in one Raft log entry; 1 disables
	// batching.
	maxBatch int
	// raftLogStore is wal or bolt, fixed for the life of a data dir.
	raftLogStore string
	// secretsKeyFile seals BMC passwords at rest (default DATA/secrets.key).
	secretsKeyFile string
	// Version gate and divergence check: how often the leader reads the
	// members' health, how often it compares state hashes, and how many
	// log entries apart members hash their state.
	probeInterval, hashCheckInterval time.Duration
	hashEvery                        uint64
	// stopTimeout bounds SIGTERM to exit: leadership hand-over, in-flight
	// requests, Raft shutdown (stop.go). Keep it below the unit's
	// TimeoutStopSec.
	stopTimeout time.Duration
	// trailingLogs is how many Raft log entries a snapshot leaves behind.
	trailingLogs uint64
	// fs is the flag set Flags made: serve asks it which flags were given
	// (--node-id and --bootstrap mean more when given).
	fs *pflag.FlagSet
}

// Flags declares c's flags on a new flag set.
func (c *Config) Flags() *pflag.FlagSet {
	host, _ := os.Hostname()
	fs := pflag.NewFlagSet("rackfence-coordinator", pflag.ContinueOnError)
	c.fs = fs
	fs.Usage = func() { // names the offline subcommands (tools.go) too
		fmt.Fprint(fs.Output(), toolsUsage)
		fs.PrintDefaults()
	}
	str := func(p *string, name, def, usage string) { fs.StringVar(p, name, def, usage) }
	str(&c.nodeID, "node-id", host, "Raft server ID of this member")
	str(&c.dataDir, "data-dir", coordinator.DefaultDataDir, "Raft log (wal/ or raft.db), stable store (raft.db), snapshots, admin.token")
	str(&c.httpAddr, "http-addr", coordinator.DefaultHTTPAddr, "API, /metrics listen address")
	str(&c.advertiseHTTP, "advertise-http", "", "API URL other members and clients use for this member (default: from --http-addr)")
	str(&c.raftAddr, "raft-addr", coordinator.DefaultRaftAddr, "Raft transport (TCP) address")
	fs.BoolVar(&c.bootstrap, "bootstrap", false, "start a new cluster of one (default: true when the data dir is new and --join is empty)")
	str(&c.join, "join", "", "HTTP URL of any member; this node asks the leader to add it as a voter")
	str(&c.joinTokenFile, "join-token-file", "", "admin token file used for --join (default: RACKFENCE_TOKEN)")
	str(&c.tier, "tier", coordinator.DefaultTier, "this cluster's tier name")
	fs.StringArrayVar(&c.peerTiers, "peer-tier", nil, "NAME=URL of another tier (repeatable)")
	fs.StringArrayVar(&c.peerTokenFiles, "peer-token-file", nil, "NAME=FILE token used to call tier NAME (repeatable)")
	fs.BoolVar(&c.insecure, "insecure-plaintext", false, "serve the API over plain HTTP and Raft over plain TCP (NOT for production: anyone on the network can read tokens and BMC passwords and speak Raft)")
	str(&c.caCert, "ca-cert", "", "at bootstrap: use this CA certificate (PEM) instead of creating one (with --ca-key)")
	str(&c.caKey, "ca-key", "", "key of --ca-cert (members issue agent certificates with it)")
	str(&c.caFile, "ca-file", "", "with --join: trust this CA file (default: the CA the join token pins)")
	str(&c.caFingerprint, "ca-fingerprint", "", "with --join: pin the cluster CA by its SHA-256 (64 hex digits; rackfencectl cluster status shows it)")
	fs.StringArrayVar(&c.tlsSANs, "tls-san", nil, "extra DNS name or IP address the member certificate covers (repeatable)")
	fs.DurationVar(&c.certValidity, "cert-validity", pki.DefaultCertValidity, "lifetime of issued member and agent certificates (renewed at two thirds)")
	str(&c.tlsCert, "tls-cert", "", "serve the API with this certificate instead of the member certificate (e.g. from your own PKI)")
	str(&c.tlsKey, "tls-key", "", "key of --tls-cert")
	str(&c.tlsClientCA, "tls-client-ca", "", "require every API client to present a certificate signed by this CA or the cluster CA")
	str(&c.raftLogLevel, "raft-log-level", coordinator.DefaultRaftLogLevel, "log level of the Raft library")
	fs.IntVar(&c.maxBatch, "max-batch", coordinator.DefaultMaxBatch, "most writes the leader packs into one Raft log entry (1 disables batching)")
	str(&c.raftLogStore, "raft-log-store", coordinator.DefaultLogStore, "where the Raft log is kept: auto (the store the data dir was written with; bolt for a new one), bolt (raft.db) or wal (raft-wal segment files in DATA/wal: a member that truncated its log tail cannot restart, see docs); fixed for the life of a data dir")
	str(&c.secretsKeyFile, "secrets-key-file", "", "keys that seal BMC passwords at rest (default DATA/secrets.key; generated by a new cluster; SIGHUP reloads it)")
	fs.DurationVar(&c.probeInterval, "probe-interval", coordinator.DefaultProbeInterval, "how often the leader reads every member's version and state hashes (GET /v1/health)")
	fs.DurationVar(&c.hashCheckInterval, "hash-check-interval", coordinator.DefaultHashCheckInterval, "how often the leader compares the members' state hashes")
	fs.DurationVar(&c.stopTimeout, "stop-timeout", coordinator.DefaultStopTimeout, "most time from SIGTERM to exit: hand leadership over, finish requests, shut Raft down; when Raft is still stuck then, exit 1 anyway (keep below systemd's TimeoutStopSec, 30s)")
	fs.Uint64Var(&c.trailingLogs, "raft-trailing-logs", coordinator.DefaultTrailingLogs, "Raft log entries a snapshot leaves behind, so a follower that fell behind catches up from the log instead of a snapshot")
	fs.Uint64Var(&c.hashEvery, "hash-every", fsm.DefaultHashEvery, "members hash their state every this many Raft log entries, doubled for each doubling of the fleet above 16,384 hosts (the same on every member)")
	return fs
}

// Validate checks the flags before anything is opened or listened on.
// Every error names the flag, what is wrong and what to do.
func (c *Config) Validate() error {
	if c.nodeID == "" {
		return errors.New("--node-id is empty and the hostname is unknown: set --node-id")
	}
	if c.dataDir == "" {
		return fmt.Errorf("--data-dir is empty: give the member's data directory (default %s)", coordinator.DefaultDataDir)
	}
	for flag, addr := range map[string]string{"http-addr": c.httpAddr, "raft-addr": c.raftAddr} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("--%s %q is not HOST:PORT (%v): use e.g. 127.0.0.1:7480", flag, addr, err)
		}
	}
	if c.bootstrap && c.join != "" {
		return errors.New("--bootstrap and --join exclude each other: a node either starts a new cluster or joins one")
	}
	if _, err := parsePairs("peer-tier", c.peerTiers); err != nil {
		return err
	}
	if _, err := parsePairs("peer-token-file", c.peerTokenFiles); err != nil {
		return err
	}
	if c.certValidity < time.Second {
		return fmt.Errorf("--cert-validity %s is too short: use at least 1s (default %s)", c.certValidity, pki.DefaultCertValidity)
	}
	if c.maxBatch < 1 {
		return fmt.Errorf("--max-batch %d: use 1 (no batching) or more (default %d)", c.maxBatch, coordinator.DefaultMaxBatch)
	}
	if c.raftLogStore != coordinator.LogStoreWAL && c.raftLogStore != coordinator.LogStoreBolt && c.raftLogStore != coordinator.LogStoreAuto {
		return fmt.Errorf("--raft-log-store %q is not a log store: use %s, %s or %s (default %s)", c.raftLogStore, coordinator.LogStoreAuto, coordinator.LogStoreBolt, coordinator.LogStoreWAL, coordinator.DefaultLogStore)
	}
	for flag, d := range map[string]time.Duration{"probe-interval": c.probeInterval, "hash-check-interval": c.hashCheckInterval} {
		if d < 100*time.Millisecond {
			return fmt.Errorf("--%s %s is too short: use at least 100ms (defaults: probe %s, hash check %s)", flag, d, coordinator.DefaultProbeInterval, coordinator.DefaultHashCheckInterval)
		}
	}
	if c.stopTimeout < time.Second {
		return fmt.Errorf("--stop-timeout %s is too short to hand leadership over: use at least 1s (default %s)", c.stopTimeout, coordinator.DefaultStopTimeout)
	}
	if c.trailingLogs < 1 {
		return fmt.Errorf("--raft-trailing-logs %d: use 1 or more (default %d)", c.trailingLogs, coordinator.DefaultTrailingLogs)
	}
	if c.hashEvery < 1 {
		return fmt.Errorf("--hash-every %d: use 1 or more (default %d)", c.hashEvery, fsm.DefaultHashEvery)
	}
	if c.insecure && (c.tlsCert != "" || c.caCert != "" || c.join != "" && (c.caFile != "" || c.caFingerprint != "")) {
		return errors.New("--insecure-plaintext excludes --tls-cert, --ca-cert, --ca-file and --ca-fingerprint: drop them, or drop --insecure-plaintext")
	}
	if c.caCert != "" && c.caKey == "" {
		return errors.New("--ca-cert needs --ca-key: members issue agent certificates with it")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together: give both or neither")
	}
	if c.tlsClientCA != "" && c.tlsCert == "" {
		return errors.New("--tls-client-ca needs --tls-cert and --tls-key")
	}
	return nil
}

// parsePairs reads the NAME=VALUE values of a repeatable flag.
func parsePairs(flag string, vals []string) (map[string]string, error) {
	m := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" || val == "" {
			return nil, fmt.Errorf("--%s %q: want NAME=VALUE", flag, v)
		}
		if err := wire.ValidateName("--"+flag+" name", k); err != nil {
			return nil, err
		}
		m[k] = val
	}
	return m, nil
}
