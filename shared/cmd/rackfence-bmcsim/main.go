// Command rackfence-bmcsim serves N simulated Redfish BMCs on consecutive
// loopback ports (see shared/bmcsim and CONTRACT.md).
//
//	rackfence-bmcsim --hosts N --base-port P [--latency D] [--jitter D] [--audit FILE]
//
// Every flag also reads RACKFENCE_<FLAG> (upper case, '-' → '_') from the
// environment. SIGTERM or SIGINT stops it.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/rackfence/rackfence/shared/bmcsim"
	"github.com/rackfence/rackfence/shared/daemon"
	"github.com/rackfence/rackfence/shared/version"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run runs rackfence-bmcsim with args and returns the exit code.
func run(args []string) int {
	var c Config
	return daemon.Program{
		Name: "rackfence-bmcsim", Flags: c.flags(), Common: &c.Common, Validate: c.Validate,
		Run: func(ctx context.Context, log *slog.Logger) error { return serve(ctx, c.Sim, log) },
	}.Main(args)
}

// serve runs the simulator until ctx ends (SIGTERM, SIGINT).
func serve(ctx context.Context, cfg bmcsim.Config, log *slog.Logger) error {
	sim, err := bmcsim.Start(cfg)
	if err != nil {
		return fmt.Errorf("cannot start: %w", err)
	}
	last := sim.Port(sim.Hosts() - 1)
	// Scripts and tests wait for this line on stdout.
	fmt.Printf("rackfence-bmcsim: %d BMCs listening on %s:%d-%d (first %s)\n", sim.Hosts(), cfg.Host, sim.BasePort(), last, sim.Address(0))
	log.Info("serving", "version", version.Version, "hosts", sim.Hosts(), "basePort", sim.BasePort(), "latency", cfg.Latency,
		"jitter", cfg.Jitter, "audit", cfg.AuditPath, "tls", cfg.TLS)
	<-ctx.Done()
	log.Info("stopping")
	if err := sim.Close(); err != nil {
		return fmt.Errorf("closing: %w", err)
	}
	return nil
}
