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
	"github.com/rackfence/rackfence/shared/pki"
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
	insecure                                        bool
	caCert, caKey, caFile, caFingerprint            string
	tlsSANs                                         []string
	certValidity                                    time.Duration
	secretsKeyFile                                  string
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
	fs.BoolVar(&o.insecure, "insecure-plaintext", false, "serve the API over plain HTTP and Raft over plain TCP (NOT for production: anyone on the network can read tokens and BMC passwords and speak Raft)")
	fs.StringVar(&o.caCert, "ca-cert", "", "at bootstrap: use this CA certificate (PEM) instead of creating one (with --ca-key)")
	fs.StringVar(&o.caKey, "ca-key", "", "key of --ca-cert (members issue agent certificates with it)")
	fs.StringVar(&o.caFile, "ca-file", "", "with --join: trust this CA file (default: the CA the join token pins)")
	fs.StringVar(&o.caFingerprint, "ca-fingerprint", "", "with --join: pin the cluster CA by its SHA-256 (64 hex digits; rackfencectl cluster status shows it)")
	fs.StringArrayVar(&o.tlsSANs, "tls-san", nil, "extra DNS name or IP address the member certificate covers (repeatable)")
	fs.DurationVar(&o.certValidity, "cert-validity", pki.DefaultCertValidity, "lifetime of issued member and agent certificates (renewed at two thirds)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve the API with this certificate instead of the member certificate (e.g. from your own PKI)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "key of --tls-cert")
	fs.StringVar(&o.tlsClientCA, "tls-client-ca", "", "require every API client to present a certificate signed by this CA or the cluster CA")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.raftLogLevel, "raft-log-level", "warn", "log level of the Raft library")
	fs.IntVar(&o.maxBatch, "max-batch", 512, "most writes the leader packs into one Raft log entry (1 disables batching)")
	fs.StringVar(&o.raftLogStore, "raft-log-store", coordinator.LogStoreWAL, "where the Raft log is kept: wal (raft-wal segment files in DATA/wal) or bolt (raft.db); fixed for the life of a data dir")
	fs.StringVar(&o.pprofAddr, "pprof-addr", "", "serve net/http/pprof on this address (off when empty; never expose it)")
	fs.StringVar(&o.secretsKeyFile, "secrets-key-file", "", "keys that seal BMC passwords at rest (default DATA/secrets.key; generated by a new cluster; SIGHUP reloads it)")
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

	if o.certValidity < time.Second {
		return fmt.Errorf("--cert-validity %s is too short: use at least 1s (default %s)", o.certValidity, pki.DefaultCertValidity)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// Sets the umask (0077) too, so open it before anything is written.
	secrets, err := openSecrets(o.secretsKeyFile, o.dataDir, bootstrap && !existing, log)
	if err != nil {
		return err
	}
	var sec *memberTLS
	var tlsServer, tlsClient *tls.Config
	scheme := "http"
	if o.insecure {
		if o.tlsCert != "" || o.caCert != "" || o.join != "" && (o.caFile != "" || o.caFingerprint != "") {
			return errors.New("--insecure-plaintext excludes --tls-cert, --ca-cert, --ca-file and --ca-fingerprint")
		}
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
	log.Info("coordinator listening", "node", o.nodeID, "http", advertise, "raft", o.raftAddr, "dataDir", o.dataDir,
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

func pprofMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}
