// Command rackfence-bmcsim serves N simulated Redfish BMCs on consecutive
// loopback ports (see shared/bmcsim and CONTRACT.md).
//
//	rackfence-bmcsim --hosts N --base-port P [--latency D] [--jitter D] [--audit FILE]
//
// Every flag also reads RACKFENCE_<FLAG> (upper case, '-' → '_') from the
// environment. SIGTERM or SIGINT stops it.
package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/bmcsim"
	"github.com/rackfence/rackfence/shared/envflag"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := pflag.NewFlagSet("rackfence-bmcsim", pflag.ContinueOnError)
	var cfg bmcsim.Config
	fs.IntVar(&cfg.Hosts, "hosts", 1, "number of BMCs")
	fs.StringVar(&cfg.Host, "host", "127.0.0.1", "listen address of every BMC")
	fs.IntVar(&cfg.BasePort, "base-port", 9001, "port of BMC 0; BMC i listens on base-port+i (0: pick a free range)")
	fs.DurationVar(&cfg.Latency, "latency", 0, "delay added to every Redfish request (e.g. 200ms)")
	fs.DurationVar(&cfg.Jitter, "jitter", 0, "uniform random extra delay 0..jitter per request")
	fs.StringVar(&cfg.AuditPath, "audit", "", "append one JSON line per mutating call to this file")
	fs.StringVar(&cfg.Username, "username", "admin", "BMC user name")
	fs.StringVar(&cfg.Password, "password", "password", "BMC password")
	fs.StringVar(&cfg.MACPrefix, "mac-prefix", "52:54:00:00", "first four bytes of each host's MAC; the last two are the BMC index")
	fs.BoolVar(&cfg.PowerOn, "power-on", false, "start every host powered on")
	fs.BoolVar(&cfg.TLS, "tls", false, "serve HTTPS with a self-signed certificate")
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	if err := envflag.Apply(fs); err != nil {
		fmt.Fprintln(os.Stderr, "rackfence-bmcsim:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	sim, err := bmcsim.Start(cfg)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	last := sim.Port(sim.Hosts() - 1)
	fmt.Printf("rackfence-bmcsim: %d BMCs listening on %s:%d-%d (first %s)\n", sim.Hosts(), cfg.Host, sim.BasePort(), last, sim.Address(0))
	log.Info("serving", "hosts", sim.Hosts(), "basePort", sim.BasePort(), "latency", cfg.Latency, "jitter", cfg.Jitter, "audit", cfg.AuditPath, "tls", cfg.TLS)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	s := <-sig
	log.Info("stopping", "signal", s.String())
	if err := sim.Close(); err != nil {
		log.Error("closing", "err", err)
		return 1
	}
	return 0
}
