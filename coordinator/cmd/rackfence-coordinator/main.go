// Command rackfence-coordinator is one member of a rackfence coordinator
// cluster: Raft-replicated inventory, intents, rack leases and tokens behind
// the HTTP API v1 (CONTRACT.md).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/coordinator"
	capi "github.com/rackfence/rackfence/coordinator/api"
	"github.com/rackfence/rackfence/coordinator/pivot"
	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/daemon"
	"github.com/rackfence/rackfence/shared/version"
)

func main() {
	os.Exit(program(os.Args[1:]))
}

// program runs rackfence-coordinator with args and returns the exit code.
func program(args []string) int {
	var c Config
	fs := c.flags()
	return daemon.Program{
		Name: "rackfence-coordinator", Flags: fs, Common: &c.Common, Validate: c.Validate,
		Run: func(ctx context.Context, log *slog.Logger) error { return serve(ctx, c, fs, log) },
	}.Main(args)
}

func serve(ctx context.Context, o Config, fs *pflag.FlagSet, log *slog.Logger) error {
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
	// The node ID is kept in the data dir: a restarted node needs no
	// --node-id, and a different one by mistake is refused.
	idFile := filepath.Join(o.dataDir, "node-id")
	if b, err := os.ReadFile(idFile); err == nil {
		stored := strings.TrimSpace(string(b))
		if fs.Changed("node-id") || os.Getenv("RACKFENCE_NODE_ID") != "" {
			if stored != o.nodeID {
				return fmt.Errorf("--node-id %q differs from %q stored in %s: a member keeps its ID; use the stored one or a new data dir", o.nodeID, stored, idFile)
			}
		}
		o.nodeID = stored
	} else if existing {
		log.Warn("data dir has Raft state but no node-id file; using --node-id", "nodeID", o.nodeID)
	}
	bootstrap := o.bootstrap
	if !fs.Changed("bootstrap") && os.Getenv("RACKFENCE_BOOTSTRAP") == "" {
		bootstrap = !existing && o.join == ""
	}

	// Sets the umask (0077) too, so open it before anything is written.
	secrets, err := openSecrets(o.secretsKeyFile, o.dataDir, bootstrap && !existing, log)
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
		if sec, err = setupTLS(ctx, o, existing, secrets, log); err != nil {
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
	}
	acfg := capi.Config{Tier: o.tier, PeerTiers: peerTiers, PeerTokenFiles: peerTokens,
		Logger: log, Registry: reg, ProxyTLS: tlsClient, Pivot: peers}
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
	defer store.Close()
	if err := os.WriteFile(idFile, []byte(o.nodeID+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", idFile, err)
	}
	m.Register(reg, store)

	acfg.Store = store
	srv := capi.New(acfg)
	ln, err := net.Listen("tcp", o.httpAddr)
	if err != nil {
		return fmt.Errorf("listen on --http-addr %s: %w", o.httpAddr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), TLSConfig: tlsServer,
		// A client has 10 s to send its headers (TLS handshake included)
		// and 64 KiB of them; idle keep-alive connections close after 2
		// min. No write timeout: the watch long-polls for up to 30 s.
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 1)
	go func() {
		var err error
		if tlsServer != nil {
			err = hs.ServeTLS(ln, "", "")
		} else {
			err = hs.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
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
		log.Info("shutting down")
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	}
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	_ = hs.Shutdown(sctx)
	return store.Close()
}

// joinCluster asks the member at --join to add this node; a follower
// forwards it to the leader. It retries until it succeeds or ctx ends.
func joinCluster(ctx context.Context, o Config, advertise string, tlsClient *tls.Config, log *slog.Logger) error {
	token, err := joinToken(o)
	if err != nil {
		return err
	}
	token, _ = api.ParseToken(token)
	body, _ := json.Marshal(api.JoinRequest{ID: o.nodeID, RaftAddr: o.raftAddr, HTTPAddr: advertise})
	client := &http.Client{Timeout: 40 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsClient}}
	url := strings.TrimRight(o.join, "/") + "/v1/cluster/join"
	for attempt := 1; ; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err == nil {
			msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				log.Info("joined the cluster", "via", o.join)
				return nil
			}
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusBadRequest {
				return fmt.Errorf("join via %s refused (%d): %s", o.join, resp.StatusCode, strings.TrimSpace(string(msg)))
			}
			err = fmt.Errorf("%d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
		}
		log.Warn("join attempt failed; retrying", "via", o.join, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
