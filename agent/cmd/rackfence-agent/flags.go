package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/agent"
	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/bmcaccount"
	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/shared/client"
)

// Provisioners of --provisioner.
const (
	provDirect = "direct"
	provIronic = "ironic"
)

// maxWorkers bounds --workers: beyond it goroutines and BMC sessions cost
// more than they bring (agent/DESIGN.md).
const maxWorkers = 10000

// watchCoalesce maps --watch-coalesce to agent.Config.WatchCoalesce: 0
// (no pause) is negative there, where 0 takes the default.
func watchCoalesce(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// maxProcs bounds --max-procs (Go's own bound on GOMAXPROCS is higher; no
// agent needs more).
const maxProcs = 1024

// Config is rackfence-agent's configuration: one field a flag (every flag
// also reads RACKFENCE_<FLAG>, internal/envflag). Defaults come from the
// agent, agent/bmc, agent/hoststate and shared/client packages' Default*
// constants. --log-level, --log-format, --pprof-addr and --version are
// internal/daemon's.
type Config struct {
	daemon.Common
	// coordinator is one or more member URLs, comma-separated; the agent
	// fails over between them.
	coordinator string
	// tokenFile holds the agent token (role agent, scoped to rack);
	// required. Re-read on change or SIGHUP.
	tokenFile string
	// caFile and caFingerprint: trust this CA instead of the token's pin.
	caFile, caFingerprint string
	// rack is the rack this agent manages; required.
	rack string
	// bmcAccountRotation, bmcAccountUsername, bmcAccountRole: the tier's
	// own BMC account (agent/bmcaccount).
	bmcAccountRotation                 bool
	bmcAccountUsername, bmcAccountRole string
	bmcAccountMaxAge                   time.Duration
	// agentID is the lease holder ID (default hostname-pid: a restarted
	// agent is a new holder and waits out the old lease).
	agentID string
	// provisioner is direct (BMCs only) or ironic (needs ironicURL).
	provisioner string
	// ironicURL and ironicTokenFile: the Ironic API and its token (empty:
	// noauth).
	ironicURL, ironicTokenFile string
	// ironicRedfishInspect and ironicRedfishVMedia: ironic.Config's
	// RedfishInspect and RedfishVirtualMedia ("" = decided from what
	// Ironic enables).
	ironicRedfishInspect, ironicRedfishVMedia string
	// ironicDeployKernel, ironicDeployRamdisk and ironicDeployISO:
	// ironic.Config's DeployKernel, DeployRamdisk and DeployISO (Ironic's
	// agent ramdisk, which its day-two clean steps need).
	ironicDeployKernel, ironicDeployRamdisk, ironicDeployISO string
	// workers is the number of concurrent host reconciles, 1..maxWorkers.
	workers int
	// watchCoalesce is the pause after a watch answer with changes (0: none).
	watchCoalesce time.Duration
	// maxProcs is GOMAXPROCS (0: Go's default, one per CPU), unless the
	// GOMAXPROCS environment variable is set.
	maxProcs int
	// leaseTTL is the rack lease TTL asked for; at least 1s.
	leaseTTL time.Duration
	// metricsAddr serves /metrics (and /debug/pprof/ with --pprof); empty:
	// off.
	metricsAddr string
	// pprof serves /debug/pprof/ on metricsAddr (kept from before
	// --pprof-addr; both may be used).
	pprof bool
	// auditFile gets one JSON line per guarded (mutating) call; empty: off.
	auditFile string
	// bmcTimeout bounds one read-only BMC call.
	bmcTimeout time.Duration
	// bmcPowerTimeout bounds the wait for a BMC to read back a power
	// change it accepted.
	bmcPowerTimeout time.Duration
	// driveReadTimeout bounds the wait for a BMC to read the config drive
	// inserted at provisioning.
	driveReadTimeout time.Duration
	// mutationTimeout bounds one mutating call; 0 derives it from the
	// lease TTL so that it always fits in the lease: (TTL - margin)/2.
	mutationTimeout time.Duration
	// statusRefresh rewrites an unchanged status this often.
	statusRefresh time.Duration
	// healthInterval reads each registered Redfish host's hardware
	// health this often.
	healthInterval time.Duration
	// statusPerHost writes each host's status with its own request.
	statusPerHost bool
	// shutdownGrace bounds the wait for in-flight calls on SIGTERM.
	shutdownGrace time.Duration
	// backoffBase, transientRetry and maxTransient tune the state
	// machine's error handling (hoststate.Config); 0 takes its default.
	backoffBase, transientRetry time.Duration
	maxTransient                int
	// artifactAddr serves config drives and cached images to the BMCs
	// (empty: off); artifactURL is its URL as the BMCs reach it (empty:
	// derived from the address); artifactCert/Key turn HTTPS on.
	artifactAddr, artifactURL, artifactCert, artifactKey string
	// events: the BMC event listener and the power poll (events.go).
	events eventFlags
	// imageCacheDir caches images by checksum (empty: off), within
	// imageCacheSize (parsed into imageCacheBytes by Validate).
	imageCacheDir, imageCacheSize string
	imageCacheBytes               int64
	// softOffTimeout bounds a soft power-off (reboot mode soft, a soft
	// power-off hold) before the hard one.
	softOffTimeout time.Duration
	// pollInterval is the wait before asking again about an action in
	// progress (hoststate.Config.PollInterval).
	pollInterval time.Duration
}

// Flags declares c's flags on a new flag set.
func (c *Config) Flags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("rackfence-agent", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringVar(&c.coordinator, "coordinator", client.DefaultCoordinator, "coordinator member URLs, comma-separated")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the agent token (role agent, scoped to --rack); required. The token as rackfencectl token create prints it pins the cluster CA")
	fs.StringVar(&c.caFile, "ca-file", "", "trust this cluster CA file (PEM) instead of the CA the token pins")
	fs.StringVar(&c.caFingerprint, "ca-fingerprint", "", "pin the cluster CA by its SHA-256 (64 hex digits) instead of the token's pin")
	fs.StringVar(&c.rack, "rack", "", "rack this agent manages; required")
	fs.StringVar(&c.agentID, "agent-id", defaultAgentID(), "lease holder ID")
	fs.StringVar(&c.provisioner, "provisioner", provDirect, "provisioner: direct (BMCs only) or ironic")
	fs.StringVar(&c.ironicURL, "ironic-url", "", "Ironic API endpoint (with --provisioner ironic)")
	fs.StringVar(&c.ironicTokenFile, "ironic-token-file", "", "file holding a token for Ironic (empty: noauth)")
	fs.StringVar(&c.ironicRedfishInspect, "ironic-redfish-inspect", "", "inspect interface of Redfish hosts' Ironic nodes: redfish (Ironic reads CPUs, memory, disk size through its Redfish client), no-inspect (the agent reads the BMC inventory); empty: redfish when Ironic enables it")
	fs.StringVar(&c.ironicRedfishVMedia, "ironic-redfish-virtual-media", "", "on: deploy Redfish hosts through Ironic with redfish-virtual-media boot and ramdisk deploy (image.url is a bootable ISO the BMC inserts); off: Ironic's default interfaces; empty: on when Ironic enables both")
	fs.StringVar(&c.ironicDeployKernel, "ironic-deploy-kernel", "", "URL of Ironic's agent ramdisk kernel (IPA), written into a node's driver_info when BIOS, RAID or firmware goes through Ironic's clean steps and the node names none (with --ironic-deploy-ramdisk)")
	fs.StringVar(&c.ironicDeployRamdisk, "ironic-deploy-ramdisk", "", "URL of Ironic's agent ramdisk initramfs (IPA), with --ironic-deploy-kernel")
	fs.StringVar(&c.ironicDeployISO, "ironic-deploy-iso", "", "URL of Ironic's agent ramdisk as a bootable ISO (virtual media boot), instead of --ironic-deploy-kernel and --ironic-deploy-ramdisk")
	fs.IntVar(&c.workers, "workers", agent.DefaultWorkers, "concurrent host reconciles (the default brings 1,000 hosts behind 200 ms BMCs to available within 30 s; raise it for larger racks or slower BMCs)")
	fs.IntVar(&c.maxProcs, "max-procs", agent.DefaultMaxProcs, "CPUs running the agent's Go code at once (GOMAXPROCS; 0: one per CPU); the GOMAXPROCS environment variable, when set, takes precedence. The agent mostly waits on BMCs: one is cheapest in CPU per host")
	fs.DurationVar(&c.leaseTTL, "lease-ttl", agent.DefaultLeaseTTL, "rack lease TTL")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics on this address (e.g. 127.0.0.1:9490); empty: off")
	fs.StringVar(&c.auditFile, "audit-file", "", "append one JSON line per guarded (mutating) call to this file; empty: off")
	fs.DurationVar(&c.bmcTimeout, "bmc-timeout", bmc.DefaultTimeout, "bound of one read-only BMC call (login, power read, inventory)")
	fs.DurationVar(&c.bmcPowerTimeout, "bmc-power-timeout", bmc.DefaultPowerTimeout, "how long a power change the BMC accepted may take until the BMC reads the new state back (--provisioner direct); past it the change fails (counted, retried with backoff) and poweredOn keeps the state last read")
	fs.DurationVar(&c.mutationTimeout, "mutation-timeout", 0, "bound of one mutating BMC or Ironic call; it runs only if the lease stays valid for all of it (0: (lease TTL - margin)/2, 4.5s at the default TTL)")
	fs.DurationVar(&c.statusRefresh, "status-refresh", agent.DefaultStatusRefresh, "write an unchanged host status again this often, so a stale agent shows in lastUpdated (the lease renewal is what proves the agent alive)")
	fs.DurationVar(&c.watchCoalesce, "watch-coalesce", agent.DefaultWatchCoalesce, "pause after a watch answer carrying changes before asking again, so the rack's changes meanwhile (mostly the agent's own status writes) come in one answer; it adds up to this much to the reaction to a spec or intent change (0: no pause)")
	fs.DurationVar(&c.healthInterval, "health-interval", agent.DefaultHealthInterval, "read each registered Redfish host's hardware health from its BMC this often (3 or more requests a host a read; independent of --status-refresh)")
	fs.BoolVar(&c.statusPerHost, "status-per-host", false, "write each host's status with its own request (PUT /v1/hosts/{name}/status) instead of one request per rack; the agent falls back to this by itself against a coordinator without the rack endpoint")
	fs.DurationVar(&c.shutdownGrace, "shutdown-grace", agent.DefaultShutdownGrace, "on SIGTERM, wait this long for in-flight calls before abandoning them and releasing the lease")
	fs.DurationVar(&c.backoffBase, "error-backoff-base", hoststate.DefaultBackoffBase, "unit of the error backoff: retry n waits base*2^n minus up to half")
	fs.DurationVar(&c.transientRetry, "transient-retry", hoststate.DefaultTransientRetry, "wait after a transient (uncounted) failure")
	fs.IntVar(&c.maxTransient, "max-transient-failures", hoststate.DefaultMaxTransientFailures, "transient BMC failures (timeout, unreachable, 5xx) in a row before they count as host errors with backoff (negative: never)")
	fs.StringVar(&c.artifactAddr, "artifact-addr", "", "serve config drives and cached images to the rack's BMCs on this address (HOST:PORT; --provisioner direct); empty: off, and hosts with userData/networkData/metaData are refused")
	fs.DurationVar(&c.driveReadTimeout, "config-drive-read-timeout", direct.DefaultDriveReadTimeout, "how long provisioning waits, after power-on, for the BMC to read the config drive from the artifact server (--provisioner direct); past it the host fails provisioning, naming the drive")
	fs.StringVar(&c.artifactURL, "artifact-url", "", "URL of --artifact-addr as the BMCs reach it (e.g. http://10.0.0.5:8090); empty: from --artifact-addr (which must then name a host)")
	fs.StringVar(&c.artifactCert, "artifact-cert-file", "", "serve the artifact server over HTTPS with this certificate (PEM; with --artifact-key-file)")
	fs.StringVar(&c.artifactKey, "artifact-key-file", "", "private key (PEM) of --artifact-cert-file")
	fs.StringVar(&c.imageCacheDir, "image-cache-dir", "", "cache images by checksum in this directory and give the BMCs the artifact server's URL: fetched once from the origin, verified against image.checksum before serving (needs --artifact-addr); empty: BMCs fetch images from their origin")
	fs.StringVar(&c.imageCacheSize, "image-cache-size", DefaultImageCacheSize, "bound of --image-cache-dir (e.g. 20GiB, 500GB); least recently used images are evicted")
	fs.DurationVar(&c.softOffTimeout, "soft-power-off-timeout", hoststate.DefaultSoftPowerOffTimeout, "how long a soft power-off (reboot --soft, a soft power-off hold) waits for the OS to shut down before the host is powered off hard")
	fs.DurationVar(&c.pollInterval, "poll-interval", hoststate.DefaultPollInterval, "wait before asking again about an action still in progress (a soft power-off, an Ironic deployment)")
	fs.BoolVar(&c.bmcAccountRotation, "bmc-account-rotation", false, "give each host's BMC calls an account of the tier's own, created with the host's credentials (never changed) and its password rotated before this agent's first change of the host under each new lease epoch, so a late request of an older holder is refused by the BMC (--provisioner direct, Redfish and IPMI BMCs; with --provisioner ironic each host's record says the fence at the BMC is off on that path; off by default: docs/operator.md, \"Fencing and its one limit\")")
	fs.StringVar(&c.bmcAccountUsername, "bmc-account-username", bmcaccount.DefaultUsername, "name of the tier's account on each BMC (--bmc-account-rotation); it must differ from every host's own BMC user")
	fs.DurationVar(&c.bmcAccountMaxAge, "bmc-account-max-age", 30*24*time.Hour, "rotate the tier's BMC account password again once it is this old, without a takeover (--bmc-account-rotation; 0: only on a takeover)")
	fs.StringVar(&c.bmcAccountRole, "bmc-account-role", "Operator", "Redfish RoleId of the tier's account: Operator allows power, boot and virtual media; Administrator for BMC resets and day-two work needing ConfigureManager")
	c.events.add(fs)
	fs.BoolVar(&c.pprof, "pprof", false, "also serve Go's /debug/pprof/ on --metrics-addr (profiling; --pprof-addr serves it on an address of its own)")
	return fs
}

func defaultAgentID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "agent"
	}
	return h + "-" + strconv.Itoa(os.Getpid())
}

// Validate checks the flags before any file is read or any request sent.
// Every error names the flag, what is wrong and what to do.
func (c *Config) Validate() error {
	if c.rack == "" {
		return errors.New("--rack is required (or RACKFENCE_RACK): the rack this agent manages")
	}
	if c.tokenFile == "" {
		return errors.New("--token-file is required (or RACKFENCE_TOKEN_FILE): create an agent token with rackfencectl token create --role agent --rack " + c.rack)
	}
	if _, err := client.ParseURLs(c.coordinator); err != nil {
		return fmt.Errorf("--coordinator %q: %v: give member URLs, comma-separated (default %s)", c.coordinator, err, client.DefaultCoordinator)
	}
	if c.agentID == "" {
		return errors.New("--agent-id is empty: leave it out (hostname-pid) or name this lease holder")
	}
	if c.workers < 1 || c.workers > maxWorkers {
		return fmt.Errorf("--workers %d is out of range: use 1 to %d (default %d)", c.workers, maxWorkers, agent.DefaultWorkers)
	}
	if c.maxProcs < 0 || c.maxProcs > maxProcs {
		return fmt.Errorf("--max-procs %d is out of range: use 0 (one per CPU) to %d (default %d)", c.maxProcs, maxProcs, agent.DefaultMaxProcs)
	}
	switch c.provisioner {
	case provDirect:
	case provIronic:
		if c.ironicURL == "" {
			return errors.New("--provisioner ironic needs --ironic-url (or RACKFENCE_IRONIC_URL), e.g. http://127.0.0.1:6385")
		}
		if (c.ironicDeployKernel == "") != (c.ironicDeployRamdisk == "") {
			return errors.New("--ironic-deploy-kernel and --ironic-deploy-ramdisk go together: set both (or --ironic-deploy-iso)")
		}
		for _, f := range []struct{ name, v string }{{"--ironic-deploy-kernel", c.ironicDeployKernel},
			{"--ironic-deploy-ramdisk", c.ironicDeployRamdisk}, {"--ironic-deploy-iso", c.ironicDeployISO}} {
			if u, err := url.Parse(f.v); f.v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
				return fmt.Errorf("%s %q is not an http(s) URL Ironic can download", f.name, f.v)
			}
		}
		if v := c.ironicRedfishVMedia; v != "" && v != "on" && v != "off" {
			return fmt.Errorf("--ironic-redfish-virtual-media %q is not on or off (empty: decided from what Ironic enables)", v)
		}
	default:
		return fmt.Errorf("--provisioner %q is not one of %s, %s", c.provisioner, provDirect, provIronic)
	}
	if c.bmcAccountRotation {
		if c.bmcAccountUsername == "" || len(c.bmcAccountUsername) > 16 {
			return fmt.Errorf("--bmc-account-username %q: use 1 to 16 characters (the shortest limit of common BMCs)", c.bmcAccountUsername)
		}
		if c.bmcAccountMaxAge < 0 || (c.bmcAccountMaxAge > 0 && c.bmcAccountMaxAge < time.Hour) {
			return fmt.Errorf("--bmc-account-max-age %s: use 0 (only on a takeover) or at least 1h (default 720h, 30 days)", c.bmcAccountMaxAge)
		}
		if c.bmcAccountRole != "Operator" && c.bmcAccountRole != "Administrator" {
			return fmt.Errorf("--bmc-account-role %q is not Operator or Administrator", c.bmcAccountRole)
		}
	}
	if c.leaseTTL < time.Second {
		return fmt.Errorf("--lease-ttl %s is too short: use at least 1s (default %s)", c.leaseTTL, agent.DefaultLeaseTTL)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"bmc-timeout", c.bmcTimeout}, {"bmc-power-timeout", c.bmcPowerTimeout}, {"config-drive-read-timeout", c.driveReadTimeout}, {"mutation-timeout", c.mutationTimeout}, {"status-refresh", c.statusRefresh},
		{"health-interval", c.healthInterval}, {"shutdown-grace", c.shutdownGrace}, {"error-backoff-base", c.backoffBase}, {"transient-retry", c.transientRetry},
		{"soft-power-off-timeout", c.softOffTimeout}, {"poll-interval", c.pollInterval}, {"watch-coalesce", c.watchCoalesce}} {
		if d.v < 0 {
			return fmt.Errorf("--%s %s is negative: use a positive duration (0 takes the default)", d.flag, d.v)
		}
	}
	if err := c.validateArtifacts(); err != nil {
		return err
	}
	if err := c.events.validate(c.provisioner); err != nil {
		return err
	}
	if c.pprof && c.metricsAddr == "" {
		return errors.New("--pprof serves /debug/pprof/ on --metrics-addr, which is empty: set --metrics-addr, or use --pprof-addr ADDR")
	}
	return nil
}
