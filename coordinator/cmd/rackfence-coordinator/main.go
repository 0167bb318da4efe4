// Command rackfence-coordinator is one member of a rackfence coordinator
// cluster: Raft-replicated inventory, intents, rack leases and tokens behind
// the HTTP API v1 (CONTRACT.md).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/coordinator"
	capi "github.com/rackfence/rackfence/coordinator/api"
	"github.com/rackfence/rackfence/coordinator/pivot"
	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/envflag"
)

type options struct {
	nodeID, dataDir, httpAddr, raftAddr, join, tier string
	advertiseHTTP                                   string
	bootstrap                                       bool
	peerTiers, peerTokenFiles                       []string
	tlsCert, tlsKey, tlsClientCA                    string
	logLevel, raftLogLevel                          string
	joinTokenFile                                   string
	maxBatch                                        int
	pprofAddr                                       string
	raftLogStore                                    string
}

func main() {
	os.Exit(run())
}

func run() int {
	host, _ := os.Hostname()
	var o options
	fs := pflag.NewFlagSet("rackfence-coordinator", pflag.ContinueOnError)
	fs.StringVar(&o.nodeID, "node-id", host, "Raft server ID of this member")
	fs.StringVar(&o.dataDir, "data-dir", "./rackfence-data", "Raft log (wal/ or raft.db), stable store (raft.db), snapshots, admin.token")
	fs.StringVar(&o.httpAddr, "http-addr", "127.0.0.1:7480", "API, /metrics listen address")
	fs.StringVar(&o.advertiseHTTP, "advertise-http", "", "API URL other members and clients use for this member (default: from --http-addr)")
	fs.StringVar(&o.raftAddr, "raft-addr", "127.0.0.1:7481", "Raft transport (TCP) address")
	fs.BoolVar(&o.bootstrap, "bootstrap", false, "start a new cluster of one (default: true when the data dir is new and --join is empty)")
	fs.StringVar(&o.join, "join", "", "HTTP URL of any member; this node asks the leader to add it as a voter")
	fs.StringVar(&o.joinTokenFile, "join-token-file", "", "admin token file used for --join (default: RACKFENCE_TOKEN)")
	fs.StringVar(&o.tier, "tier", "default", "this cluster's tier name")
	fs.StringArrayVar(&o.peerTiers, "peer-tier", nil, "NAME=URL of another tier (repeatable)")
	fs.StringArrayVar(&o.peerTokenFiles, "peer-token-file", nil, "NAME=FILE token used to call tier NAME (repeatable)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate")
	fs.StringVar(&o.tlsKey, "tls-key", "", "key of --tls-cert")
	fs.StringVar(&o.tlsClientCA, "tls-client-ca", "", "require client certificates signed by this CA")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.raftLogLevel, "raft-log-level", "warn", "log level of the Raft library")
	fs.IntVar(&o.maxBatch, "max-batch", 512, "most writes the leader packs into one Raft log entry (1 disables batching)")
	fs.StringVar(&o.raftLogStore, "raft-log-store", coordinator.LogStoreWAL, "where the Raft log is kept: wal (raft-wal segment files in DATA/wal) or bolt (raft.db); fixed for the life of a data dir")
	fs.StringVar(&o.pprofAddr, "pprof-addr", "", "serve net/http/pprof on this address (off when empty; never expose it)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := envflag.Apply(fs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(o.logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "--log-level %q: use debug, info, warn or error\n", o.logLevel)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(log)
	if err := serve(o, fs, log); err != nil {
		log.Error("coordinator stopped", "err", err)
		return 1
	}
	return 0
}

func parsePairs(flag string, vals []string) (map[string]string, error) {
	m := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" || val == "" {
			return nil, fmt.Errorf("--%s %q: want NAME=VALUE", flag, v)
		}
		if err := api.ValidateName("--"+flag+" name", k); err != nil {
			return nil, err
		}
		m[k] = val
	}
	return m, nil
}

func serve(o options, fs *pflag.FlagSet, log *slog.Logger) error {
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
	if o.nodeID == "" {
		return errors.New("--node-id is empty and the hostname is unknown: set --node-id")
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
	if bootstrap && o.join != "" {
		return errors.New("--bootstrap and --join exclude each other: a node either starts a new cluster or joins one")
	}

	tlsServer, tlsClient, err := tlsConfigs(o)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsServer != nil {
		scheme = "https"
	}
	advertise := o.advertiseHTTP
	if advertise == "" {
		advertise = scheme + "://" + o.httpAddr
	}

	if o.pprofAddr != "" {
		go func() {
			log.Info("pprof listening", "addr", o.pprofAddr)
			log.Warn("pprof stopped", "err", http.ListenAndServe(o.pprofAddr, pprofMux()))
		}()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := exportRaftMetrics(reg); err != nil {
		log.Warn("raft's internal metrics are not exported", "err", err)
	}
	m := coordinator.NewMetrics()
	store, err := coordinator.Open(coordinator.Config{
		NodeID: o.nodeID, DataDir: o.dataDir, HTTPURL: advertise, RaftAddr: o.raftAddr,
		Bootstrap: bootstrap, Logger: log, RaftLogLevel: o.raftLogLevel, MaxBatch: o.maxBatch, Metrics: m,
		LogStore: o.raftLogStore,
	})
	if err != nil {
		return err
	}
	defer store.Close()
	if err := os.WriteFile(idFile, []byte(o.nodeID+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", idFile, err)
	}
	m.Register(reg, store)

	srv := capi.New(capi.Config{Store: store, Tier: o.tier, PeerTiers: peerTiers, PeerTokenFiles: peerTokens,
		Logger: log, Registry: reg, ProxyTLS: tlsClient, Pivot: peers})
	ln, err := net.Listen("tcp", o.httpAddr)
	if err != nil {
		return fmt.Errorf("listen on --http-addr %s: %w", o.httpAddr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), TLSConfig: tlsServer, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
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
	log.Info("coordinator listening", "node", o.nodeID, "http", advertise, "raft", o.raftAddr, "dataDir", o.dataDir,
		"tier", o.tier, "bootstrap", bootstrap, "restarted", existing)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

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
	if ok, err := daemon.SdNotify(false, daemon.SdNotifyReady); err != nil {
		log.Warn("sd_notify failed", "err", err)
	} else if ok {
		log.Info("notified systemd: ready")
	}
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
func joinCluster(ctx context.Context, o options, advertise string, tlsClient *tls.Config, log *slog.Logger) error {
	token := strings.TrimSpace(os.Getenv("RACKFENCE_TOKEN"))
	if o.joinTokenFile != "" {
		b, err := os.ReadFile(o.joinTokenFile)
		if err != nil {
			return fmt.Errorf("--join-token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		return errors.New("--join needs the cluster's admin token: --join-token-file FILE or RACKFENCE_TOKEN")
	}
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

func tlsConfigs(o options) (server, client *tls.Config, err error) {
	if o.tlsCert == "" && o.tlsKey == "" {
		if o.tlsClientCA != "" {
			return nil, nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil, nil
	}
	if o.tlsCert == "" || o.tlsKey == "" {
		return nil, nil, errors.New("--tls-cert and --tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	if err != nil {
		return nil, nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	client = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.tlsClientCA != "" {
		pem, err := os.ReadFile(filepath.Clean(o.tlsClientCA))
		if err != nil {
			return nil, nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("--tls-client-ca %s holds no PEM certificate", o.tlsClientCA)
		}
		server.ClientCAs, server.ClientAuth = pool, tls.RequireAndVerifyClientCert
		client.RootCAs = pool
	}
	return server, client, nil
}

func pprofMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}
