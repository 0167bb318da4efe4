// Command rackfence-agent is the daemon beside each rack: it holds the
// rack's lease, follows the coordinator's watch, and drives the rack's hosts
// through their BMCs (direct) or Ironic. Flags are CONTRACT.md's; every flag
// is also read from RACKFENCE_<FLAG> (upper case, dashes as underscores).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/agent"
	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/envflag"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/pki"
)

// version is set at build time (-ldflags "-X main.version=…").
var version = "dev"

type options struct {
	coordinator     string
	tokenFile       string
	rack            string
	agentID         string
	provisioner     string
	ironicURL       string
	ironicTokenFile string
	workers         int
	leaseTTL        time.Duration
	metricsAddr     string
	auditFile       string
	logLevel        string
	bmcTimeout      time.Duration
	mutationTimeout time.Duration
	statusRefresh   time.Duration
	shutdownGrace   time.Duration
	backoffBase     time.Duration
	transientRetry  time.Duration
	maxTransient    int
	pprof           bool
	caFile          string
	caFingerprint   string
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	var o options
	fs := pflag.NewFlagSet("rackfence-agent", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringVar(&o.coordinator, "coordinator", "https://127.0.0.1:7480", "coordinator member URLs, comma-separated")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the agent token (role agent, scoped to --rack); required. The token as rackfencectl token create prints it pins the cluster CA")
	fs.StringVar(&o.caFile, "ca-file", "", "trust this cluster CA file (PEM) instead of the CA the token pins")
	fs.StringVar(&o.caFingerprint, "ca-fingerprint", "", "pin the cluster CA by its SHA-256 (64 hex digits) instead of the token's pin")
	fs.StringVar(&o.rack, "rack", "", "rack this agent manages; required")
	fs.StringVar(&o.agentID, "agent-id", defaultAgentID(), "lease holder ID")
	fs.StringVar(&o.provisioner, "provisioner", "direct", "provisioner: direct (BMCs only) or ironic")
	fs.StringVar(&o.ironicURL, "ironic-url", "", "Ironic API endpoint (with --provisioner ironic)")
	fs.StringVar(&o.ironicTokenFile, "ironic-token-file", "", "file holding a token for Ironic (empty: noauth)")
	fs.IntVar(&o.workers, "workers", agent.DefaultWorkers, "concurrent host reconciles (CONTRACT.md said 32; 256 is the measured default that brings 1,000 hosts behind 200 ms BMCs to available within 30 s, see agent/DESIGN.md)")
	fs.DurationVar(&o.leaseTTL, "lease-ttl", agent.DefaultLeaseTTL, "rack lease TTL")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics on this address (e.g. 127.0.0.1:9490); empty: off")
	fs.StringVar(&o.auditFile, "audit-file", "", "append one JSON line per guarded (mutating) call to this file; empty: off")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.DurationVar(&o.bmcTimeout, "bmc-timeout", 20*time.Second, "bound of one read-only BMC call (login, power read, inventory)")
	fs.DurationVar(&o.mutationTimeout, "mutation-timeout", 0, "bound of one mutating BMC or Ironic call; it runs only if the lease stays valid for all of it (0: (lease TTL - margin)/2, 4.5s at the default TTL)")
	fs.DurationVar(&o.statusRefresh, "status-refresh", agent.DefaultStatusRefresh, "write an unchanged host status again this often, so a stale agent shows in lastUpdated")
	fs.DurationVar(&o.shutdownGrace, "shutdown-grace", agent.DefaultShutdownGrace, "on SIGTERM, wait this long for in-flight calls before abandoning them and releasing the lease")
	fs.DurationVar(&o.backoffBase, "error-backoff-base", 0, "unit of the error backoff: retry n waits base*2^n minus up to half (0: the state machine's default, 1m)")
	fs.DurationVar(&o.transientRetry, "transient-retry", 0, "wait after a transient (uncounted) failure (0: the state machine's default, 15s)")
	fs.IntVar(&o.maxTransient, "max-transient-failures", 0, "transient BMC failures (timeout, unreachable, 5xx) in a row before they count as host errors with backoff (0: the state machine's default, 5; negative: never)")
	fs.BoolVar(&o.pprof, "pprof", false, "also serve Go's /debug/pprof/ on --metrics-addr (profiling)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "rackfence-agent:", err)
		return 2
	}
	if err := envflag.Apply(fs); err != nil {
		fmt.Fprintln(os.Stderr, "rackfence-agent:", err)
		return 2
	}

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(o.logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "rackfence-agent: --log-level %q is not one of debug, info, warn, error\n", o.logLevel)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(log)

	if err := serve(o, log); err != nil {
		log.Error("rackfence-agent failed", "err", err.Error())
		return 1
	}
	return 0
}

func defaultAgentID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "agent"
	}
	return h + "-" + strconv.Itoa(os.Getpid())
}

func serve(o options, log *slog.Logger) error {
	if o.rack == "" {
		return errors.New("--rack is required (or RACKFENCE_RACK): the rack this agent manages")
	}
	if o.tokenFile == "" {
		return errors.New("--token-file is required (or RACKFENCE_TOKEN_FILE): create an agent token with rackfencectl token create --role agent --rack " + o.rack)
	}
	tokenFile, token, err := agent.NewTokenFile(o.tokenFile, nil, log)
	if err != nil {
		return err
	}
	if o.workers < 1 || o.workers > 10000 {
		return fmt.Errorf("--workers %d is out of range: use 1 to 10000 (default %d)", o.workers, agent.DefaultWorkers)
	}
	if o.provisioner != "direct" && o.provisioner != "ironic" {
		return fmt.Errorf("--provisioner %q is not one of direct, ironic", o.provisioner)
	}
	if o.leaseTTL < time.Second {
		return fmt.Errorf("--lease-ttl %s is too short: use at least 1s", o.leaseTTL)
	}
	if o.mutationTimeout <= 0 {
		// Renewals run every TTL/3, so the lease always has at least
		// TTL - margin - TTL/3 left; half of TTL - margin fits in that.
		o.mutationTimeout = (o.leaseTTL - fence.Margin(o.leaseTTL)) / 2
	}
	if o.bmcTimeout <= 0 {
		o.bmcTimeout = 20 * time.Second
	}
	// At most agent.CoordinatorConns connections to the coordinator (the
	// cluster trust and the client certificate are set on it by client.New).
	tr := agent.CoordinatorTransport(nil)
	// The agent's client certificate, obtained with the token below once
	// the coordinator is reached over TLS; empty until then.
	cert := &pki.Holder{}
	c, err := client.New(client.Config{Coordinator: o.coordinator, Token: token, HTTPClient: &http.Client{Transport: tr},
		UserAgent: "rackfence-agent/" + version + " (" + o.agentID + "; rack=" + o.rack + ")",
		Timeout:   10 * time.Second, RetryFor: 5 * time.Second, Logger: log,
		CAFile: o.caFile, CAFingerprint: o.caFingerprint, ClientCertificate: cert.GetClientCertificate})
	if err != nil {
		return err
	}
	tlsOn := c.TLS()
	if !tlsOn {
		log.Warn("INSECURE: the coordinator is reached over plain HTTP; the token and the BMC passwords the agent reads cross the network in clear")
	}
	tokenFile.Client = c // re-read on change or SIGHUP: rotation needs no restart

	metrics := agent.NewMetrics()
	var audit guard.Auditor
	if o.auditFile != "" {
		fa, err := guard.NewFileAudit(o.auditFile)
		if err != nil {
			return err
		}
		defer fa.Close()
		audit = fa
	}
	holder := fence.NewHolder(nil)
	guard := guard.NewGuard(holder, metrics.Auditor(audit))

	prov, closeProv, err := newProvisioner(o, holder, guard, log)
	if err != nil {
		return err
	}
	defer closeProv()

	a, err := agent.New(agent.Config{
		Client: c, Rack: o.rack, AgentID: o.agentID, Workers: o.workers, LeaseTTL: o.leaseTTL,
		StatusRefresh: o.statusRefresh, ShutdownGrace: o.shutdownGrace,
		Holder: holder, Guard: guard, Provisioner: prov, Metrics: metrics, Logger: log,
		StateMachine: hoststate.Config{BackoffBase: o.backoffBase, TransientRetry: o.transientRetry, MaxTransientFailures: o.maxTransient},
		OnRunning: func() {
			if _, err := daemon.SdNotify(false, daemon.SdNotifyReady); err != nil {
				log.Warn("sd_notify READY failed", "err", err.Error())
			}
		},
	})
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if tlsOn {
		if err := agent.Enroll(ctx, c, cert, o.agentID, log); err != nil {
			return err
		}
		go agent.RenewCert(ctx, c, cert, o.agentID, log)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go tokenFile.Run(ctx, hup)
	if o.metricsAddr != "" {
		ln, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr %s: %w", o.metricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics.Handler())
		if o.pprof {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		}
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		log.Info("serving metrics", "addr", ln.Addr().String())
	}
	log.Info("rackfence-agent starting", "version", version, "rack", o.rack, "agentID", o.agentID,
		"provisioner", prov.Name(), "workers", o.workers, "leaseTTL", o.leaseTTL, "bmcTimeout", o.bmcTimeout, "mutationTimeout", o.mutationTimeout,
		"coordinator", c.URLs())
	return a.Run(ctx)
}

// newProvisioner builds the --provisioner back end and its closer.
func newProvisioner(o options, holder *fence.Holder, guard *guard.Guard, log *slog.Logger) (provisioner.Provisioner, func(), error) {
	bmcOpts := bmc.Options{Timeout: o.bmcTimeout, MutationTimeout: o.mutationTimeout, Logger: log,
		UserAgent: bmc.AgentUserAgent(version, o.agentID, o.rack, holder)}
	switch o.provisioner {
	case "direct":
		p, err := direct.New(direct.Config{Guard: guard, BMC: bmcOpts, Logger: log})
		if err != nil {
			return nil, nil, err
		}
		return p, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = p.Close(ctx)
		}, nil
	case "ironic":
		return newIronic(o, guard, bmcOpts, log)
	default:
		return nil, nil, fmt.Errorf("--provisioner %q is not one of direct, ironic", o.provisioner)
	}
}
