// Command rackfence-bmcsim serves N simulated Redfish BMCs on consecutive
// loopback ports (see testkit/bmcsim/DESIGN.md).
//
//	rackfence-bmcsim --hosts N --base-port P [--profile NAME] [--latency D] [--jitter D] [--audit FILE]
//	rackfence-bmcsim --list-profiles
//
// Every flag also reads RACKFENCE_<FLAG> (upper case, '-' → '_') from the
// environment. SIGTERM or SIGINT stops it.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/internal/version"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

func main() { os.Exit(daemon.Main(name, &Config{}, serve, os.Args[1:])) }

// name is the binary's name (--version, error prefix).
const name = "rackfence-bmcsim"

// serve runs the simulator until ctx ends (SIGTERM, SIGINT).
func serve(ctx context.Context, c *Config, log *slog.Logger) error {
	if c.ListProfiles {
		for _, p := range bmcsim.Profiles() {
			fmt.Printf("%-20s %s\n", p, bmcsim.ProfileSource(p))
		}
		return nil
	}
	cfg := c.Sim
	sim, err := bmcsim.Start(cfg)
	if err != nil {
		return fmt.Errorf("cannot start: %w", err)
	}
	last := sim.Port(sim.Hosts() - 1)
	// Scripts and tests wait for this line on stdout.
	fmt.Printf("rackfence-bmcsim: %d BMCs listening on %s:%d-%d (first %s)\n", sim.Hosts(), cfg.Host, sim.BasePort(), last, sim.Address(0))
	log.Info("serving", "version", version.Version, "hosts", sim.Hosts(), "profile", sim.Profile(), "basePort", sim.BasePort(), "latency", cfg.Latency,
		"jitter", cfg.Jitter, "audit", cfg.AuditPath, "tls", cfg.TLS)
	<-ctx.Done()
	log.Info("stopping")
	if err := sim.Close(); err != nil {
		return fmt.Errorf("closing: %w", err)
	}
	return nil
}
