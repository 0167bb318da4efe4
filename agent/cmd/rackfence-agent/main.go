// Command rackfence-agent is the daemon beside each rack: it holds the
// rack's lease, follows the coordinator's watch, and drives the rack's hosts
// through their BMCs (direct) or Ironic. Flags are in docs/operator.md; every flag
// is also read from RACKFENCE_<FLAG> (upper case, dashes as underscores).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rackfence/rackfence/agent"
	"github.com/rackfence/rackfence/agent/artifact"
	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/bmcaccount"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/internal/version"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/fence"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run runs rackfence-agent with args and returns the exit code.
func run(args []string) int { return daemon.Main("rackfence-agent", &Config{}, serve, args) }

// Bounds of one coordinator request of the agent: an agent must learn
// quickly that a member is gone, to fail over within its lease TTL.
const (
	coordinatorTimeout  = 10 * time.Second
	coordinatorRetryFor = 5 * time.Second
)

func serve(ctx context.Context, o *Config, log *slog.Logger) error {
	applyMaxProcs(o.maxProcs, log)
	tokenFile, token, err := agent.NewTokenFile(o.tokenFile, nil, log)
	if err != nil {
		return err
	}
	if o.mutationTimeout == 0 {
		o.mutationTimeout = fence.MutationTimeout(o.leaseTTL)
	}
	// At most agent.CoordinatorConns connections to the coordinator (the
	// cluster trust and the client certificate are set on it by client.New).
	tr := agent.CoordinatorTransport(nil)
	// The agent's client certificate, obtained with the token below once
	// the coordinator is reached over TLS; empty until then.
	cert := &pki.Holder{}
	c, err := client.New(client.Config{Coordinator: o.coordinator, Token: token, HTTPClient: &http.Client{Transport: tr},
		UserAgent: version.UserAgent("rackfence-agent") + " (" + o.agentID + "; rack=" + o.rack + ")",
		Timeout:   coordinatorTimeout, RetryFor: coordinatorRetryFor, Logger: log,
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
	g := guard.NewGuard(holder, metrics.Auditor(audit))

	art, stopArt, err := startArtifacts(o, metrics.Registry(), log)
	if err != nil {
		return err
	}
	defer stopArt()
	prov, closeProv, err := newProvisioner(o, holder, g, art, log)
	if err != nil {
		return err
	}
	defer closeProv()

	var accts *bmcaccount.Manager
	if o.bmcAccountRotation {
		ac := bmcaccount.Config{Store: c, Guard: g, Username: o.bmcAccountUsername, Role: o.bmcAccountRole, MaxAge: o.bmcAccountMaxAge, Registerer: metrics.Registry(),
			Timeout: o.bmcTimeout, MutationTimeout: o.mutationTimeout, Logger: log,
			UserAgent: bmc.AgentUserAgent(version.Version, o.agentID, o.rack, holder)}
		if o.provisioner != provDirect {
			// Ironic makes the BMC calls: each host's record says the
			// fence at the BMC is off on this path, and why.
			ac.Off = bmcaccount.OffIronic
		}
		accts = bmcaccount.New(ac)
	}
	evLn, evURL, err := o.events.listen()
	if err != nil {
		return err
	}
	a, err := agent.New(agent.Config{
		EventsURL: evURL, EventsSilence: o.events.silence, PowerPoll: o.events.powerPoll,
		BMCAccounts: accts,
		Client:      c, Rack: o.rack, AgentID: o.agentID, Workers: o.workers, LeaseTTL: o.leaseTTL,
		StatusRefresh: o.statusRefresh, HealthInterval: o.healthInterval, ShutdownGrace: o.shutdownGrace, StatusPerHost: o.statusPerHost,
		WatchCoalesce: watchCoalesce(o.watchCoalesce),
		Holder:        holder, Guard: g, Provisioner: prov, Metrics: metrics, Logger: log,
		StateMachine: hoststate.Config{BackoffBase: o.backoffBase, TransientRetry: o.transientRetry, MaxTransientFailures: o.maxTransient,
			SoftPowerOffTimeout: o.softOffTimeout, PollInterval: o.pollInterval},
		OnRunning: func() { daemon.Ready(log) },
	})
	if err != nil {
		if evLn != nil {
			evLn.Close()
		}
		return err
	}
	stopEvents, err := o.events.serve(evLn, a, log)
	if err != nil {
		evLn.Close()
		return err
	}
	defer stopEvents()

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
			daemon.MountPprof(mux)
		}
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		log.Info("serving metrics", "addr", ln.Addr().String())
	}
	log.Info("rackfence-agent starting", "version", version.Version, "rack", o.rack, "agentID", o.agentID,
		"provisioner", prov.Name(), "workers", o.workers, "leaseTTL", o.leaseTTL, "bmcTimeout", o.bmcTimeout, "bmcPowerTimeout", o.bmcPowerTimeout, "mutationTimeout", o.mutationTimeout,
		"coordinator", c.URLs())
	return a.Run(ctx)
}

// newProvisioner builds the --provisioner back end and its closer.
func newProvisioner(o *Config, holder *fence.Holder, g *guard.Guard, art *artifact.Server, log *slog.Logger) (provisioner.Provisioner, func(), error) {
	bmcOpts := bmc.Options{Timeout: o.bmcTimeout, MutationTimeout: o.mutationTimeout, PowerTimeout: o.bmcPowerTimeout, Logger: log,
		UserAgent: bmc.AgentUserAgent(version.Version, o.agentID, o.rack, holder)}
	if o.provisioner == provIronic { // Validate allowed only direct and ironic
		return newIronic(o, g, bmcOpts, log)
	}
	p, err := direct.New(direct.Config{Guard: g, BMC: bmcOpts, Logger: log, Artifacts: art, DriveReadTimeout: o.driveReadTimeout})
	if err != nil {
		return nil, nil, err
	}
	return p, closeWithin(p.Close), nil
}

// closeBound bounds how long a provisioner's Close may take at exit.
const closeBound = 5 * time.Second

// closeWithin returns a closer that calls close with a closeBound deadline.
func closeWithin(close func(context.Context) error) func() {
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeBound)
		defer cancel()
		_ = close(ctx)
	}
}
