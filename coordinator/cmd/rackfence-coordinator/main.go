// Command rackfence-coordinator is one member of a rackfence coordinator
// cluster: Raft-replicated inventory, intents, rack leases and tokens behind
// the HTTP API v1 (docs/api.md).
package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/rackfence/rackfence/coordinator"
	capi "github.com/rackfence/rackfence/coordinator/api"
	"github.com/rackfence/rackfence/coordinator/pivot"
	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/internal/version"
)

func main() {
	if len(os.Args) > 1 {
		if tool := tools[os.Args[1]]; tool != nil {
			os.Exit(tool(os.Args[2:]))
		}
	}
	os.Exit(daemon.Main("rackfence-coordinator", &Config{}, serveChecked, os.Args[1:]))
}

func serve(ctx context.Context, o *Config, log *slog.Logger) error {
	setGCTarget(os.Getenv, log)
	peerTiers, err := parsePairs("peer-tier", o.peerTiers)
	if err != nil {
		return err
	}
	peerTokens, err := parsePairs("peer-token-file", o.peerTokenFiles)
	if err != nil {
		return err
	}
	var peers *pivot.Peers
	if len(peerTiers) > 0 {
		if peers, err = pivot.NewPeers(o.tier, peerTiers, peerTokens); err != nil {
			return err
		}
	}
	existing := coordinator.HasState(o.dataDir)
	bootstrap, err := resolveIdentity(o, existing, log)
	if err != nil {
		return err
	}

	// A data dir restore prepared starts a new cluster (new secrets key
	// unless the restore copied one in, new TLS files) on restored state.
	fresh, err := freshRestore(o, log)
	if err != nil {
		return err
	}
	// Sets the umask (0077) too, so open it before anything is written.
	secrets, err := openSecrets(o.secretsKeyFile, o.dataDir, bootstrap && !existing || fresh, log)
	if err != nil {
		return err
	}
	var sec *memberTLS
	var tlsServer, tlsClient *tls.Config
	scheme := "http"
	if o.insecure {
		log.Warn("INSECURE: --insecure-plaintext serves the API over plain HTTP and Raft over plain TCP; " +
			"tokens and BMC passwords cross the network in clear and any process that reaches the Raft port can speak Raft. Use only on a trusted test network.")
	} else {
		if sec, err = setupTLS(ctx, o, existing && !fresh, secrets, log); err != nil {
			return err
		}
		tlsServer, tlsClient, scheme = sec.apiServer(), sec.proxyClient(), "https"
		go sec.renew(ctx, o.nodeID, o.certValidity, log)
	}
	advertise := o.advertiseHTTP
	if advertise == "" {
		advertise = scheme + "://" + o.httpAddr
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := exportRaftMetrics(reg); err != nil {
		log.Warn("raft's internal metrics are not exported", "err", err)
	}
	m := coordinator.NewMetrics()
	scfg := coordinator.Config{
		NodeID: o.nodeID, DataDir: o.dataDir, HTTPURL: advertise, RaftAddr: o.raftAddr,
		Bootstrap: bootstrap, Logger: log, RaftLogLevel: o.raftLogLevel, MaxBatch: o.maxBatch, Metrics: m,
		Secrets: secrets, LogStore: o.raftLogStore,
		ProbeInterval: o.probeInterval, HashCheckInterval: o.hashCheckInterval, HashEvery: o.hashEvery,
		TrailingLogs: o.trailingLogs,
		PeerClient:   &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsClient}},
	}
	acfg := capi.Config{Tier: o.tier, PeerTiers: peerTiers, PeerTokenFiles: peerTokens,
		Logger: log, Registry: reg, ProxyTLS: tlsClient, Pivot: peers, ElectionTime: scfg.ElectionTime()}
	if sec != nil {
		scfg.RaftTLS, scfg.TokenPin = sec.raft(), sec.ca.Fingerprint()
		acfg.TLS, acfg.CAPin = sec.apiConfig(o.certValidity), sec.ca.Fingerprint()
		acfg.TLS.SecretsKeys = func() ([]byte, error) {
			k := secrets.Get()
			if k == nil {
				return nil, nil
			}
			return k.Marshal(), nil
		}
	}
	store, err := coordinator.Open(scfg)
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = store.Shutdown(context.Background())
		}
	}()
	if err := storeNodeID(o); err != nil {
		return err
	}
	if err := storeTier(o); err != nil {
		return err
	}
	noteRecovery(o, log)
	m.Register(reg, store)

	acfg.Store = store
	srv := capi.New(acfg)
	ln, err := net.Listen("tcp", o.httpAddr)
	if err != nil {
		return fmt.Errorf("listen on --http-addr %s: %w", o.httpAddr, err)
	}
	hs, errc := serveAPI(ln, srv.Handler(), tlsServer, log)
	caFP := ""
	if sec != nil {
		caFP = sec.ca.Fingerprint()
	}
	log.Info("coordinator listening", "version", version.Version, "node", o.nodeID, "http", advertise, "raft", o.raftAddr, "dataDir", o.dataDir,
		"tier", o.tier, "bootstrap", bootstrap, "restarted", existing, "tls", sec != nil, "caFingerprint", caFP)

	if o.join != "" && !existing {
		if err := joinCluster(ctx, o, advertise, tlsClient, log); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	if err := store.WaitLeader(wctx); err != nil {
		log.Warn("no leader known yet; serving anyway", "err", err)
	}
	cancel()
	daemon.Ready(log)
	log.Info("coordinator ready", "node", o.nodeID, "state", store.State())

	select {
	case <-ctx.Done():
		log.Info("shutting down", "stopTimeout", o.stopTimeout.String(), "state", store.State())
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	}
	stopped = true
	return stopMember(store, hs, o.stopTimeout, log)
}
