package bmc

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	bmclib "github.com/bmc-toolbox/bmclib/v2"
	"github.com/bmc-toolbox/bmclib/v2/providers/ipmitool"
	"github.com/jacobweinstock/registrar"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/internal/version"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
)

// Target says which BMC to talk to and how to log in.
type Target struct {
	// Address is a BMC address as hosts give it (docs/api.md): redfish://host[:port][/path]
	// (HTTPS), redfish+http://host[:port][/path], or ipmi://host[:port].
	Address string
	// Username and Password log in to the BMC. The password is never put in
	// an error, a log line or an event.
	Username string
	Password string
	// Insecure skips TLS certificate verification for redfish:// (the
	// host's bmc.disableCertificateVerification).
	Insecure bool
}

// Defaults of Options (and of rackfence-agent's --bmc-timeout).
const (
	// DefaultTimeout bounds one read-only BMC call (login, power read,
	// inventory). 20 s, as agent/DESIGN.md documents for --bmc-timeout
	// (this package said 30 s before 2026-11-23 while the agent's flag
	// said 20 s; the agent always set it, so 20 s is what ran).
	DefaultTimeout = 20 * time.Second
)

// DefaultMutationTimeout bounds one mutating call when the caller gives
// none: the fence's default (fence.DefaultMutationTimeout, 4.5 s at the
// default 10 s TTL); rackfence-agent derives its own from its lease TTL.
var DefaultMutationTimeout = fence.DefaultMutationTimeout

// Options tune every Conn. The zero value is usable.
type Options struct {
	// Timeout bounds each read-only call (login included) when the
	// caller's context has no earlier deadline. DefaultTimeout when zero.
	Timeout time.Duration
	// MutationTimeout bounds each mutating call, and is the room the guard
	// demands on the lease before letting it start: the lease must stay
	// valid for all of it. Keep it well under the lease TTL minus its margin
	// minus the renewal period: with the default 10s TTL renewed every
	// TTL/3, a held lease has between about 5.7s and 9s left, so the
	// default 4.5s always fits. A power change against a BMC answering in
	// 200ms takes about 0.6s, a virtual media insert about 2s.
	// DefaultMutationTimeout when zero.
	MutationTimeout time.Duration
	// PowerTimeout bounds the wait for the BMC to read back a power change
	// it accepted (SetPower, SetPowerRead). DefaultPowerTimeout when zero.
	PowerTimeout time.Duration
	// UserAgent returns the User-Agent of each HTTP request of a call; it
	// gets the call's context (guard.Guard.Do puts the verified epoch in it,
	// see guard.EpochFromContext). Use AgentUserAgent. Nil: "rackfence-agent/VERSION"
	// (internal/version).
	UserAgent func(ctx context.Context) string
	// IPMICipherSuite is ipmitool's -C for ipmi:// targets. Default "3"
	// (other suites stall ~10s on several BMCs and simulators).
	IPMICipherSuite string
	// Logger receives debug lines (never a password). Nil: slog.Default().
	Logger *slog.Logger
	// TaskPollInterval is how often WaitTask and FinishUpdate read a BMC
	// task. DefaultTaskPollInterval when zero.
	TaskPollInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MutationTimeout <= 0 {
		o.MutationTimeout = DefaultMutationTimeout
	}
	if o.PowerTimeout <= 0 {
		o.PowerTimeout = DefaultPowerTimeout
	}
	if o.UserAgent == nil {
		o.UserAgent = func(context.Context) string { return version.UserAgent("rackfence-agent") }
	}
	if o.IPMICipherSuite == "" {
		o.IPMICipherSuite = "3"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.TaskPollInterval <= 0 {
		o.TaskPollInterval = DefaultTaskPollInterval
	}
	return o
}

// Conn is an open session to one BMC: for redfish:// targets through this
// package's Redfish layer on gofish (redfish_*.go), for ipmi:// targets
// through bmclib's ipmitool provider. It is safe for concurrent use; calls
// on one Conn run one at a time (a BMC is one machine). Read-only methods
// take no guard; every mutating method requires one and runs the BMC call
// inside guard.Guard.Do.
type Conn struct {
	target Target
	opts   Options
	proto  string // "redfish" or "ipmi"
	addr   string // host:port, for messages
	scheme wire.BMCScheme

	mu     sync.Mutex
	client *bmclib.Client // ipmi: the bmclib client
	rf     *rfSession     // redfish: the logged-in gofish client
	tr     *callTransport // the transport of client or rf
	closed bool
	// Redfish: what was learnt about the service, kept across re-logins.
	authMode string       // "session" or "basic", once one worked
	disc     *rfDiscovery // nil until the first call needing it
	freshSys *rfSystemDoc // the system document discovery read in the current call
	// invSys and invMgr are the system and manager documents discovery or
	// Details read, kept for the next Inventory only and only within
	// inventoryReuse (registration then inspection read each once); any
	// other Inventory (re-inspection) reads them again, and they go with
	// the Conn (dropped after an error, replaced with a new address or
	// credentials).
	invSys keptDoc[rfSystemDoc]
	invMgr keptDoc[rfManagerDoc]
	// healthSys is the system as discovery or inventory last read it,
	// kept the same way for the next Health only (healthSystem).
	healthSys keptDoc[rfHealthSystem]
	// biosRegs are the BIOS attribute registries read, by name (a new
	// BIOS version names a new one).
	biosRegs map[string]BIOSRegistry
}

// Dial parses t.Address and opens a session (Redfish: service root, then
// session login or HTTP Basic, then the system; IPMI: a bmclib client
// restricted to ipmitool and a power query), bounded by
// opts.Timeout. Errors wrap errclass.ErrAuth, errclass.ErrTransient, errclass.ErrFailed or
// errclass.ErrUnsupported; a malformed address wraps errclass.ErrFailed.
func Dial(ctx context.Context, t Target, opts Options) (*Conn, error) {
	s, err := wire.ParseBMCAddress(t.Address)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errclass.ErrFailed, err)
	}
	c := &Conn{target: t, opts: opts.withDefaults(), proto: s.Protocol, addr: s.HostPort(), scheme: s}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.open(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Protocol is "redfish" or "ipmi".
func (c *Conn) Protocol() string { return c.proto }

// newClient builds the bmclib client (IPMI) with only ipmitool registered.
func (c *Conn) newClient() (*bmclib.Client, *callTransport, error) {
	s := c.scheme
	port := strconv.Itoa(portOf(s))
	reg := registrar.NewRegistry()
	tr := &callTransport{base: baseTransport(c.target.Insecure)}
	if s.Protocol != "ipmi" {
		return nil, nil, fmt.Errorf("%w: protocol %q", errclass.ErrUnsupported, s.Protocol)
	}
	drv, err := ipmitool.New(s.Host, c.target.Username, c.target.Password,
		ipmitool.WithPort(port), ipmitool.WithCipherSuite(c.opts.IPMICipherSuite))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: ipmitool is needed for %s and was not found: %v", errclass.ErrUnsupported, c.addr, err)
	}
	reg.Register(ipmitool.ProviderName, ipmitool.ProviderProtocol, ipmitool.Features, nil, drv)
	cl := bmclib.NewClient(s.Host, c.target.Username, c.target.Password,
		bmclib.WithRegistry(reg), bmclib.WithPerProviderTimeout(c.opts.Timeout))
	return cl, tr, nil
}

func portOf(s wire.BMCScheme) int {
	_, p, err := net.SplitHostPort(s.HostPort())
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// open logs in. c.mu must be held.
func (c *Conn) open(ctx context.Context) error {
	if c.closed {
		return fmt.Errorf("%w: bmc connection to %s is closed", errclass.ErrFailed, c.addr)
	}
	if c.proto == "redfish" {
		return c.openRedfish(ctx)
	}
	cl, tr, err := c.newClient()
	if err != nil {
		return err
	}
	cctx, cancel := c.callContext(ctx)
	defer cancel()
	tr.begin(cctx, c.opts.UserAgent(cctx))
	err = cl.Open(cctx)
	seen := tr.end()
	if err != nil {
		return c.classify(cctx, "login", err, seen)
	}
	c.client, c.tr = cl, tr
	return nil
}

func (c *Conn) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= c.opts.Timeout {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.opts.Timeout)
}

// call runs fn on the bmclib (IPMI) session; see inSession.
func (c *Conn) call(ctx context.Context, op string, fn func(ctx context.Context, cl *bmclib.Client) error) error {
	return c.inSession(ctx, op, func(ctx context.Context) error { return fn(ctx, c.client) })
}

// inSession runs fn with c.mu held, on an open session (logging in when
// there is none) and with the call's context installed in the transport;
// on an authentication failure of a reused session (expired, BMC
// rebooted) it logs in again once and retries: a 401 means the BMC did
// not act, so the retry cannot repeat a mutation. Errors fn returns
// already classified (errclass.ErrUnsupported for a missing device, errclass.ErrFailed for a
// change that did not take) are returned as they are; others are
// classified from what the transport saw. The one loop of both protocols
// (call for bmclib, rfCall for the Redfish layer).
func (c *Conn) inSession(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cctx, cancel := c.callContext(ctx)
	defer cancel()
	for attempt := 0; ; attempt++ {
		if c.tr == nil { // no session: open sets it with the client
			if err := c.open(cctx); err != nil {
				return err
			}
		}
		c.tr.begin(cctx, c.opts.UserAgent(cctx))
		c.freshSys = nil // only ever reused within one call
		err := fn(cctx)
		seen := c.tr.end()
		if err == nil {
			return nil
		}
		if classified(err) {
			return err
		}
		cerr := c.classify(cctx, op, err, seen)
		if attempt == 0 && seen.authFailed && cctx.Err() == nil {
			c.opts.Logger.Debug("bmc session refused, logging in again", "bmc", c.addr, "op", op)
			c.dropSession()
			continue
		}
		return cerr
	}
}

// dropSession forgets the client without a logout round trip. c.mu held.
func (c *Conn) dropSession() {
	c.client, c.rf, c.tr = nil, nil, nil
}

// Close logs out (Redfish DELETE of the session) and releases the Conn.
func (c *Conn) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.rf != nil {
		return c.closeRedfish(ctx)
	}
	if c.client == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	c.tr.begin(cctx, c.opts.UserAgent(cctx))
	err := c.client.Close(cctx)
	c.tr.end()
	c.client, c.tr = nil, nil
	if err != nil {
		return fmt.Errorf("%w: bmc logout on %s: %s", errclass.ErrTransient, c.addr, c.scrub(err.Error()))
	}
	return nil
}

// PowerState reads the host's power: true when on (Redfish On/PoweringOff,
// ipmitool "Chassis Power is on"); a Redfish system with no PowerState
// reads false (Power tells it apart: PowerUnknown).
func (c *Conn) PowerState(ctx context.Context) (bool, error) {
	if c.proto == "redfish" {
		return c.rfPowerState(ctx)
	}
	var on bool
	err := c.call(ctx, "power get", func(ctx context.Context, cl *bmclib.Client) error {
		s, err := cl.GetPowerState(ctx)
		if err != nil {
			return err
		}
		v, err := normalisePower(s)
		on = v
		return err
	})
	return on, err
}

func normalisePower(s string) (bool, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	v = strings.TrimPrefix(v, "chassis power is ")
	switch v {
	case "on", "poweringoff", "powering off":
		return true, nil
	case "off", "poweringon", "powering on":
		return false, nil
	}
	return false, fmt.Errorf("unknown power state %q", s)
}

// SetPower powers the host on or off (hard off: Redfish ForceOff), under
// the guard: refused with guard.ErrFenced when the lease does not cover the
// call. It returns once the BMC reads the new state back (see
// SetPowerRead, which also says what was read).
func (c *Conn) SetPower(ctx context.Context, g *guard.Guard, host string, on bool) error {
	_, err := c.SetPowerRead(ctx, g, host, on)
	return err
}

// setPower sends the power change under the guard; sent is false when the
// system already read that state and nothing was sent.
func (c *Conn) setPower(ctx context.Context, g *guard.Guard, host string, on bool) (sent bool, err error) {
	state, op := "off", "power off"
	if on {
		state, op = "on", "power on"
	}
	if c.proto == "redfish" {
		return c.rfSetPower(ctx, g, host, op, on)
	}
	return true, g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.call(ctx, op, func(ctx context.Context, cl *bmclib.Client) error {
			ok, err := cl.SetPowerState(ctx, state)
			if err == nil && !ok {
				return fmt.Errorf("BMC did not confirm power %s", state)
			}
			return err
		})
	})
}

// SoftPowerOff asks the host's OS to shut down, under the guard: Redfish
// ComputerSystem.Reset GracefulShutdown (errclass.ErrUnsupported when the system
// does not offer it), IPMI chassis power soft. Nothing is sent when the
// host is already off. It returns at once; the caller polls PowerState.
func (c *Conn) SoftPowerOff(ctx context.Context, g *guard.Guard, host string) error {
	const op = "power soft off"
	if c.proto == "redfish" {
		return c.rfSoftPowerOff(ctx, g, host, op)
	}
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.call(ctx, op, func(ctx context.Context, cl *bmclib.Client) error {
			ok, err := cl.SetPowerState(ctx, "soft")
			if err == nil && !ok {
				return fmt.Errorf("BMC did not confirm power soft")
			}
			return err
		})
	})
}

// Boot devices accepted by SetBootDeviceMode.
var bootDevices = map[string]bool{"pxe": true, "disk": true, "cdrom": true, "bios": true, "none": true}

// Boot modes accepted by SetBootDeviceMode ("" is UEFI).
const (
	BootModeUEFI   = "UEFI"
	BootModeLegacy = "Legacy"
)

// SetBootDeviceMode sets the next boot (persistent=false: once) to dev,
// one of pxe, disk, cdrom, bios, none, under the guard, in a boot mode: "" or UEFI (sent as
// BootSourceOverrideMode when the system offers the property and UEFI),
// or Legacy: refused with errclass.ErrUnsupported, before any request changes
// anything, where the system has no BootSourceOverrideMode or its
// AllowableValues lack Legacy.
func (c *Conn) SetBootDeviceMode(ctx context.Context, g *guard.Guard, host, dev string, persistent bool, mode string) error {
	if !bootDevices[dev] {
		return fmt.Errorf("%w: boot device %q is not one of pxe, disk, cdrom, bios, none", errclass.ErrUnsupported, dev)
	}
	if mode != "" && mode != BootModeUEFI && mode != BootModeLegacy {
		return fmt.Errorf("%w: boot mode %q is not UEFI or Legacy", errclass.ErrUnsupported, mode)
	}
	op := "boot " + dev
	if persistent {
		op += " persistent"
	}
	if mode == BootModeLegacy {
		op += " legacy"
	}
	if c.proto == "redfish" {
		return c.rfSetBootDevice(ctx, g, host, op, dev, persistent, mode)
	}
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.call(ctx, op, func(ctx context.Context, cl *bmclib.Client) error {
			ok, err := cl.SetBootDevice(ctx, dev, persistent, mode != BootModeLegacy)
			if err == nil && !ok {
				return fmt.Errorf("BMC did not confirm boot device %s", dev)
			}
			return err
		})
	})
}

// CheckBootMode reads, changing nothing, whether a one-time boot in mode
// (see SetBootDeviceMode) would be refused: errclass.ErrUnsupported naming the
// system and the modes it offers. IPMI takes both modes.
func (c *Conn) CheckBootMode(ctx context.Context, mode string) error {
	if c.proto != "redfish" {
		return nil
	}
	return c.rfCheckBootMode(ctx, mode)
}

// EnableSecureBoot sets SecureBootEnable on the system's SecureBoot
// resource (Redfish only), under the guard; nothing is sent when it is
// already enabled. A system with no SecureBoot resource, or an IPMI BMC:
// errclass.ErrUnsupported naming the system.
func (c *Conn) EnableSecureBoot(ctx context.Context, g *guard.Guard, host string) error {
	if c.proto != "redfish" {
		return fmt.Errorf("%w: %s: IPMI cannot enable UEFI secure boot: use a redfish:// BMC address or bootMode UEFI", errclass.ErrUnsupported, c.addr)
	}
	return c.rfEnableSecureBoot(ctx, g, host)
}

// InsertMedia inserts the CD image at url in the system's virtual media
// device (ejecting a different medium first) and reads it back (Redfish
// only; see redfish_vmedia.go), under the guard. A BMC with no device
// taking CD or DVD: errclass.ErrUnsupported naming the resources looked at.
func (c *Conn) InsertMedia(ctx context.Context, g *guard.Guard, host, url string) error {
	if url == "" {
		return fmt.Errorf("%w: virtual media URL is empty; use EjectMedia to eject", errclass.ErrFailed)
	}
	if c.proto != "redfish" {
		return fmt.Errorf("%w: virtual media needs a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	return c.rfInsertMedia(ctx, g, host, url, slotCD)
}

// EjectMedia ejects the medium of the system's virtual media device and
// reads it back (Redfish only), under the guard. Nothing inserted, or no
// device at all: nothing to do.
func (c *Conn) EjectMedia(ctx context.Context, g *guard.Guard, host string) error {
	if c.proto != "redfish" {
		return fmt.Errorf("%w: virtual media needs a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	return c.rfEjectMedia(ctx, g, host, slotCD)
}

// InsertConfigDrive inserts the config drive image at url in a second
// virtual media device beside the CD's (USBStick, else Floppy, else another
// CD or DVD of the same collection; ejecting a different medium first) and
// reads it back, under the guard. A BMC without one: errclass.ErrUnsupported naming
// what was searched.
func (c *Conn) InsertConfigDrive(ctx context.Context, g *guard.Guard, host, url string) error {
	if url == "" {
		return fmt.Errorf("%w: config drive URL is empty; use EjectConfigDrive to eject", errclass.ErrFailed)
	}
	if c.proto != "redfish" {
		return fmt.Errorf("%w: a config drive needs Redfish virtual media; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	return redactURL(c.rfInsertMedia(ctx, g, host, url, slotDrive), url)
}

// ConfigDriveDevice returns the device InsertConfigDrive would use,
// read-only (nothing is changed): errclass.ErrUnsupported naming what was searched
// when the BMC has no second device, or is not Redfish.
func (c *Conn) ConfigDriveDevice(ctx context.Context) (string, error) {
	if c.proto != "redfish" {
		return "", fmt.Errorf("%w: a config drive needs Redfish virtual media; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	var dev string
	err := c.rfCall(ctx, "config drive device", func(ctx context.Context, s *rfSession) error {
		var err error
		dev, err = c.slotDevice(s, slotDrive, true)
		return err
	})
	return dev, err
}

// EjectConfigDrive ejects the config drive's device (nothing inserted, or
// no second device: nothing to do), under the guard.
func (c *Conn) EjectConfigDrive(ctx context.Context, g *guard.Guard, host string) error {
	if c.proto != "redfish" {
		return fmt.Errorf("%w: a config drive needs Redfish virtual media; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	return c.rfEjectMedia(ctx, g, host, slotDrive)
}

// resetBMC restarts the BMC itself (Redfish Manager.Reset GracefulRestart
// of the system's own manager, IPMI "mc reset cold"), under the guard. The
// session is dropped after it.
func (c *Conn) resetBMC(ctx context.Context, g *guard.Guard, host string) error {
	if c.proto == "redfish" {
		return c.rfResetBMC(ctx, g, host)
	}
	typ := "GracefulRestart"
	if c.proto == "ipmi" {
		typ = "cold"
	}
	return g.Do(ctx, host, "bmc reset", c.opts.MutationTimeout, func(ctx context.Context) error {
		err := c.call(ctx, "bmc reset", func(ctx context.Context, cl *bmclib.Client) error {
			ok, err := cl.ResetBMC(ctx, typ)
			if err == nil && !ok {
				return fmt.Errorf("BMC did not confirm the reset")
			}
			return err
		})
		if err == nil {
			c.mu.Lock()
			c.dropSession()
			c.mu.Unlock()
		}
		return err
	})
}

var (
	transportsMu sync.Mutex
	transports   = map[bool]*http.Transport{}
)

// connsPerBMC is how many idle connections the transport keeps per BMC,
// and how many requests one Conn runs at once (rfConcurrency), so an
// inventory round reuses them instead of dialing connections it closes
// right after (26 connections for three inventories and nine power reads of
// one host before, 4 or 5 now: TestConnectionReuse). Idle ones close after the
// transport's IdleConnTimeout (90 s). It is not a cap (MaxConnsPerHost): a
// response body the Redfish library never closed would hold a connection
// for good and then stall every later call to that BMC. Memory: an idle
// connection costs the agent about 28 KiB (RSS 48 → 160 MiB for 1,000
// hosts held at 4 each).
const connsPerBMC = 4

// tlsSessionCache is how many BMCs' TLS sessions each transport keeps for
// resumption (a resumed handshake skips the key exchange and certificate;
// the cache key is the BMC's host name or IP).
const tlsSessionCache = 4096

// baseTransport is shared by all Conns (one per TLS-verification mode).
func baseTransport(insecure bool) *http.Transport {
	transportsMu.Lock()
	defer transportsMu.Unlock()
	if t, ok := transports[insecure]; ok {
		return t
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{InsecureSkipVerify: insecure, //nolint:gosec // per-host opt-in
		ClientSessionCache: tls.NewLRUClientSessionCache(tlsSessionCache)}
	// No cap across hosts: the clone's default of 100 idle in total made
	// an agent of 1,000 hosts redial BMCs all the time (a fifth of its
	// CPU). Measured with BenchmarkThousandHosts (256 workers, 200 ms
	// latency): 12.7 s / 105 MiB / 8.3 CPU-s before, 10.2 s / 107 MiB /
	// 6.7 CPU-s with 2 idle per BMC, 10.1 s / 157 MiB with 4 per BMC
	// (then, when every request also closed its connection).
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = connsPerBMC
	t.TLSHandshakeTimeout = 10 * time.Second
	transports[insecure] = t
	return t
}
