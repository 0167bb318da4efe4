package main

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/internal/envflag"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// Config is rackfence-bmcsim's configuration: the simulator's (one flag a
// field; every flag also reads RACKFENCE_<FLAG>) and internal/daemon's
// --log-level, --log-format, --pprof-addr. Defaults are bmcsim's
// Default* constants.
type Config struct {
	daemon.Common
	Sim bmcsim.Config
	// ListProfiles prints every profile and its source, then exits 0.
	ListProfiles bool
}

// Flags declares c's flags on a new flag set.
func (c *Config) Flags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("rackfence-bmcsim", pflag.ContinueOnError)
	s := &c.Sim
	fs.IntVar(&s.Hosts, "hosts", 1, "number of BMCs")
	fs.StringVar(&s.Host, "host", bmcsim.DefaultHost, "listen address of every BMC")
	fs.IntVar(&s.BasePort, "base-port", bmcsim.DefaultBasePort, "port of BMC 0; BMC i listens on base-port+i (0: pick a free range)")
	fs.DurationVar(&s.Latency, "latency", 0, "delay added to every Redfish request (e.g. 200ms)")
	fs.DurationVar(&s.Jitter, "jitter", 0, "uniform random extra delay 0..jitter per request")
	fs.StringVar(&s.AuditPath, "audit", "", "append one JSON line per mutating call to this file")
	fs.StringVar(&s.Username, "username", bmcsim.DefaultUsername, "BMC user name")
	fs.StringVar(&s.Password, "password", bmcsim.DefaultPassword, "BMC password")
	fs.StringVar(&s.MACPrefix, "mac-prefix", bmcsim.DefaultMACPrefix, "first four bytes of each host's MAC; the last two are the BMC index")
	fs.BoolVar(&s.PowerOn, "power-on", false, "start every host powered on")
	fs.BoolVar(&s.TLS, "tls", false, "serve HTTPS with a self-signed certificate")
	fs.BoolVar(&s.FetchMedia, "fetch-media", false, "read the first 64 KiB of every inserted virtual media image (a Range GET, as a BMC does) and show the result in /sim/state (read, readError)")
	fs.StringVar(&s.Profile, "profile", bmcsim.DefaultProfile, "BMC shape every BMC serves, one of: "+strings.Join(bmcsim.Profiles(), ", ")+
		" (--list-profiles says what each is modelled on)")
	fs.DurationVar(&s.GracefulShutdownDelay, "graceful-shutdown-delay", 0, "how long the simulated OS takes to power off after a GracefulShutdown (0: at once)")
	fs.BoolVar(&s.IgnoreGracefulShutdown, "ignore-graceful-shutdown", false, "the simulated OS never obeys GracefulShutdown (a hung OS: only a hard power-off works)")
	fs.BoolVar(&c.ListProfiles, "list-profiles", false, "print each profile's name and the published Redfish shape it is modelled on, then exit")
	envflag.CommandLineOnly(fs, "list-profiles")
	return fs
}

// Validate checks the flags before any port is opened. Every error names
// the flag, what is wrong and what to do.
func (c *Config) Validate() error {
	s := c.Sim
	if s.Hosts < 1 || s.Hosts > bmcsim.MaxHosts {
		return fmt.Errorf("--hosts %d is out of range: use 1 to %d", s.Hosts, bmcsim.MaxHosts)
	}
	if s.BasePort < 0 || s.BasePort != 0 && s.BasePort+s.Hosts-1 > 65535 {
		return fmt.Errorf("--base-port %d with --hosts %d leaves the port range: use a port with room for every BMC below 65536, or 0 to pick a free range", s.BasePort, s.Hosts)
	}
	if s.Host == "" {
		return fmt.Errorf("--host is empty: give the BMCs' listen address, e.g. %s", bmcsim.DefaultHost)
	}
	if s.Latency < 0 || s.Jitter < 0 {
		return errors.New("--latency and --jitter must not be negative: use 0 or a positive duration (e.g. 200ms)")
	}
	if _, err := net.ParseMAC(s.MACPrefix + ":00:00"); err != nil || strings.Count(s.MACPrefix, ":") != 3 {
		return fmt.Errorf("--mac-prefix %q: want four hex bytes, e.g. %s", s.MACPrefix, bmcsim.DefaultMACPrefix)
	}
	if !slices.Contains(bmcsim.Profiles(), s.Profile) {
		return fmt.Errorf("--profile %q is not a profile: use one of %s", s.Profile, strings.Join(bmcsim.Profiles(), ", "))
	}
	if s.Username == "" || s.Password == "" {
		return errors.New("--username and --password must not be empty: every BMC checks them")
	}
	return nil
}
