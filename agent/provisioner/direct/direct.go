// Package direct is the provisioner without Ironic: it drives each host's
// BMC directly through agent/bmc (Redfish through its gofish layer, IPMI
// through bmclib). Register opens the BMC, reads the power and says what
// the BMC is (Result.BMCDetails); inspect reads the inventory; provision inserts the image
// as virtual media, sets a one-time boot from CD and powers on; deprovision
// ejects and powers off; adopt reads the power and changes nothing. Detach,
// maintenance and delete have no back-end record to change. Every mutating
// call goes through the agent's guard.Guard (the Conn methods require it).
//
// IPMI BMCs (ipmi://) have neither inventory nor virtual media: inspection
// records only the boot MAC, provisioning boots once from the network
// (PXE) and powers on, deprovisioning powers off.
package direct

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/rackfence/rackfence/agent/artifact"
	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Config configures the direct provisioner.
type Config struct {
	// Guard is the agent's mutation guard (required).
	Guard *guard.Guard
	// BMC are the options of every BMC session (timeout, User-Agent).
	BMC bmc.Options
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Artifacts is the agent's artifact server (--artifact-addr): it
	// serves the config drives and, with its image cache on, the images.
	// nil: no config drives, images fetched from their origin.
	Artifacts *artifact.Server
	// ImageWait bounds one Provision's wait for the image cache
	// (DefaultImageWait when zero).
	ImageWait time.Duration
	// DriveReadTimeout bounds the wait, after power-on, for the BMC to
	// read the config drive (DefaultDriveReadTimeout when zero).
	DriveReadTimeout time.Duration
}

// Provisioner implements provisioner.Provisioner over BMCs only.
type Provisioner struct {
	guard     *guard.Guard
	pool      *bmc.Pool
	log       *slog.Logger
	art       *artifact.Server
	imageWait time.Duration
	driveRead time.Duration
	drives    driveWaits
	soft      provisioner.SoftOffMarks
}

var _ provisioner.Provisioner = (*Provisioner)(nil)

// New returns a direct provisioner. Close it to log out of every BMC.
func New(cfg Config) (*Provisioner, error) {
	if cfg.Guard == nil {
		return nil, errors.New("direct provisioner: Guard is required (every mutating BMC call goes through it)")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.BMC.Logger == nil {
		cfg.BMC.Logger = cfg.Logger
	}
	if cfg.ImageWait <= 0 {
		cfg.ImageWait = DefaultImageWait
	}
	if cfg.DriveReadTimeout <= 0 {
		cfg.DriveReadTimeout = DefaultDriveReadTimeout
	}
	return &Provisioner{guard: cfg.Guard, pool: bmc.NewPool(cfg.BMC), log: cfg.Logger, art: cfg.Artifacts, imageWait: cfg.ImageWait,
		driveRead: cfg.DriveReadTimeout}, nil
}

// Close logs out of every open BMC session.
func (p *Provisioner) Close(ctx context.Context) error { return p.pool.Close(ctx) }

// Name is "direct".
func (p *Provisioner) Name() string { return "direct" }

// conn returns the host's (reused) BMC session.
func (p *Provisioner) conn(ctx context.Context, h provisioner.Host) (*bmc.Conn, error) {
	if h.BMC.Address == "" {
		return nil, fmt.Errorf("%w: host %s has no BMC address", errclass.ErrFailed, h.Name)
	}
	return p.pool.Get(ctx, h.Name, bmc.Target{Address: h.BMC.Address, Username: h.Username,
		Password: h.Password, Insecure: h.BMC.DisableCertificateVerification})
}

// done drops the host's session after a failure that may mean it is stale
// (bad credentials, BMC restarted, unreachable), so the next call logs in
// again with the current credentials. A guard refusal says nothing about
// the session and keeps it.
func (p *Provisioner) done(h provisioner.Host, err error) error {
	if err != nil && !errors.Is(err, guard.ErrFenced) {
		p.pool.Forget(context.Background(), h.Name)
	}
	return err
}

func boolp(b bool) *bool { return &b }

// Register opens the BMC (bad credentials → ErrAuth), reads its power and
// what the BMC is (bmc.Conn.Details: Redfish version, vendor, auth, system,
// where virtual media lives and how it is driven, boot modes, problems;
// for IPMI only the protocol). A Redfish service serving several systems
// with no system path in the address fails here (ErrFailed, telling the
// operator to put it in bmc.address).
func (p *Provisioner) Register(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	res, err := p.readPower(ctx, h, "registered: BMC reachable, credentials accepted")
	if err != nil {
		return res, err
	}
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	bd, err := c.Details(ctx)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	res.BMCDetails = bd
	if h.ConfigDriveWanted && bd.VirtualMedia == "" {
		none, err := c.NoVirtualMedia(ctx)
		if err != nil {
			return provisioner.Result{}, p.done(h, err)
		}
		if none != "" {
			why := none + ": the host's userData/networkData/metaData need a config drive, which the direct provisioner inserts by virtual media (remove them and configure the host another way, or use --provisioner ironic)"
			if i := slices.Index(bd.Problems, none); i >= 0 {
				bd.Problems[i] = why
			} else {
				bd.Problems = append(bd.Problems, why)
			}
		}
	}
	if len(bd.Problems) > 0 {
		res.Message += "; the BMC lacks: " + strings.Join(bd.Problems, "; ")
	}
	return res, nil
}

func (p *Provisioner) readPower(ctx context.Context, h provisioner.Host, msg string) (provisioner.Result, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	pw, err := c.Power(ctx)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	if pw == bmc.PowerUnknown {
		return provisioner.Result{Message: joinMsg(msg, "the BMC reports no power state")}, nil
	}
	return provisioner.Result{PoweredOn: boolp(pw == bmc.PowerOn), Message: msg}, nil
}

// powerResult is a power change's result: the power the BMC read back, nil
// when it reports none (PowerUnknown).
func powerResult(pw bmc.Power, msg string) provisioner.Result {
	if pw == bmc.PowerUnknown {
		return provisioner.Result{Message: joinMsg(msg, "the BMC reports no power state to confirm the change")}
	}
	return provisioner.Result{PoweredOn: boolp(pw == bmc.PowerOn), Message: msg}
}

func joinMsg(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Inspect reads the BMC's inventory into hardware details.
func (p *Provisioner) Inspect(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	if c.Protocol() == "ipmi" {
		// IPMI has no inventory to speak of: record what the spec knows
		// rather than failing inspection for ever.
		hw := &wire.HardwareDetails{}
		if h.BootMACAddress != "" {
			hw.NICs = []wire.NIC{{Name: "boot", MAC: strings.ToLower(h.BootMACAddress)}}
		}
		return provisioner.Result{HardwareDetails: hw, Message: "IPMI BMC has no inventory: hardware details hold only the boot MAC"}, nil
	}
	hw, err := c.Inventory(ctx)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	return provisioner.Result{HardwareDetails: hw, Message: "inspected through the BMC inventory"}, nil
}

// Provide has nothing to do without Ironic (no cleaning).
func (p *Provisioner) Provide(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return provisioner.Result{}, nil
}

// Provision boots h.Image by the host's boot method (bootMethod in
// netboot.go: the spec's, else virtual media where the BMC has it, else
// UEFI HTTP, else PXE). By network it sets a one-time Pxe, or UefiHttp
// with HttpBootUri the image's URL, read back, and powers on. By virtual
// media it inserts h.Image, sets a one-time boot from
// CD in the host's boot mode (BootSourceOverrideMode UEFI or Legacy;
// UEFISecureBoot first enables the system's SecureBoot resource) and powers
// the host on. An image.format other than live-iso is refused
// (ErrUnsupported: it needs --provisioner ironic); root device hints and
// automatedCleaningMode do not apply (nothing is written, nothing cleaned). A Redfish BMC with no virtual media device
// taking CD or DVD fails with ErrUnsupported naming the resources looked
// at (a counted failure of the host, not a transient error).
//
// With a config drive (h.ConfigDrive: the spec names user, network or meta
// data) the drive is built (agent/configdrive), published on the agent's
// artifact server under a random URL and inserted in a second virtual
// media device (USBStick, Floppy or another CD: ErrUnsupported naming what
// was searched when the BMC has none, before anything changes); an agent
// without an artifact server refuses such a host. Such a provision ends
// only once the BMC has read the drive from the artifact server
// (Result.ConfigDrive.ReadAt): until then it is in progress (a later call
// only looks again), and past DriveReadTimeout it fails naming the drive
// and what to check. With the artifact
// server's image cache on, the BMC is given the rack's URL of the image,
// fetched once and verified against image.checksum first (a mismatch fails
// the host with both digests; while the fetch runs the host is in
// progress).
func (p *Provisioner) Provision(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	if h.Image == nil || h.Image.URL == "" {
		return provisioner.Result{}, fmt.Errorf("%w: host %s has no image to provision: set image.url in its spec", errclass.ErrFailed, h.Name)
	}
	// A disk image format needs something that writes it to disk: Ironic.
	// No format and a URL not ending in .iso is inserted as before.
	if f := h.Image.Format; f != "" && f != wire.FormatLiveISO {
		return provisioner.Result{}, fmt.Errorf("%w: host %s: image.format %s is a disk image the direct provisioner cannot write (it only boots a live ISO by virtual media): it needs --provisioner ironic",
			errclass.ErrUnsupported, h.Name, f)
	}
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	method, err := p.bootMethod(ctx, h, c)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	if method == wire.BootMethodVirtualMedia {
		if err := p.checkDrive(ctx, h, c); err != nil {
			return provisioner.Result{}, p.done(h, err)
		}
	}
	mode := bmc.BootModeUEFI
	if h.BootMode == wire.BootModeLegacy {
		mode = bmc.BootModeLegacy
	}
	if err := c.CheckBootMode(ctx, mode); err != nil {
		return provisioner.Result{}, p.done(h, fmt.Errorf("bootMode %s: %w", h.BootMode, err))
	}
	if h.BootMode == wire.BootModeUEFISecure {
		if err := c.EnableSecureBoot(ctx, p.guard, h.Name); err != nil {
			return provisioner.Result{}, p.done(h, fmt.Errorf("bootMode UEFISecureBoot: %w", err))
		}
	}
	if c.Protocol() != "ipmi" && method != wire.BootMethodVirtualMedia {
		return p.provisionNetwork(ctx, h, c, method, mode)
	}
	if c.Protocol() == "ipmi" {
		if h.ConfigDrive != nil {
			return provisioner.Result{}, p.done(h, p.checkDrive(ctx, h, c))
		}
		// No virtual media over IPMI: boot once from the network, where
		// the image is served by PXE.
		if err := c.SetBootDeviceMode(ctx, p.guard, h.Name, "pxe", false, mode); err != nil {
			return provisioner.Result{}, p.done(h, fmt.Errorf("one-time boot from the network: %w", err))
		}
		pw, err := c.SetPowerRead(ctx, p.guard, h.Name, true)
		if err != nil {
			return provisioner.Result{}, p.done(h, fmt.Errorf("power on: %w", err))
		}
		return powerResult(pw, "IPMI BMC has no virtual media: booting once from the network (PXE)"), nil
	}
	image, ready, err := p.imageURL(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	if !ready {
		return provisioner.Result{InProgress: true, Message: "the rack's image cache is fetching and verifying the image"}, nil
	}
	msg := "image inserted as virtual media, booting once from CD"
	if image != h.Image.URL {
		msg = "image (from the rack's image cache) inserted as virtual media, booting once from CD"
	}
	driveURL, err := p.publishDrive(h)
	if err != nil {
		return provisioner.Result{}, err
	}
	if _, waiting := p.drives.get(h.Name, driveURL); waiting && driveURL != "" {
		// Inserted, booted and powered on by an earlier call: only the
		// BMC's read of the drive is awaited.
		return p.awaitDriveRead(h, driveURL, provisioner.Result{Message: msg + "; config drive inserted as a second virtual media device"})
	}
	if driveURL != "" {
		if err := c.InsertConfigDrive(ctx, p.guard, h.Name, driveURL); err != nil {
			p.forgetDrive(h)
			return provisioner.Result{}, p.done(h, fmt.Errorf("insert config drive as virtual media: %w", err))
		}
		msg += "; config drive inserted as a second virtual media device"
	}
	if err := c.InsertMedia(ctx, p.guard, h.Name, image); err != nil {
		return provisioner.Result{}, p.done(h, fmt.Errorf("insert image as virtual media: %w", err))
	}
	if err := c.SetBootDeviceMode(ctx, p.guard, h.Name, "cdrom", false, mode); err != nil {
		return provisioner.Result{}, p.done(h, fmt.Errorf("one-time boot from CD in %s mode: %w", mode, err))
	}
	pw, err := c.SetPowerRead(ctx, p.guard, h.Name, true)
	if err != nil {
		return provisioner.Result{}, p.done(h, fmt.Errorf("power on: %w", err))
	}
	if driveURL != "" {
		return p.awaitDriveRead(h, driveURL, powerResult(pw, msg))
	}
	return powerResult(pw, msg), nil
}

// Deprovision ejects the virtual media (the config drive's device too when
// the host has one), stops serving its config drive and powers the host
// off.
func (p *Provisioner) Deprovision(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	if c.Protocol() != "ipmi" && p.hasDrive(h) {
		if err := c.EjectConfigDrive(ctx, p.guard, h.Name); err != nil {
			return provisioner.Result{}, p.done(h, fmt.Errorf("eject config drive: %w", err))
		}
		p.forgetDrive(h)
	}
	if c.Protocol() != "ipmi" {
		if err := c.EjectMedia(ctx, p.guard, h.Name); err != nil {
			return provisioner.Result{}, p.done(h, fmt.Errorf("eject virtual media: %w", err))
		}
	}
	pw, err := c.SetPowerRead(ctx, p.guard, h.Name, false)
	if err != nil {
		return provisioner.Result{}, p.done(h, fmt.Errorf("power off: %w", err))
	}
	return powerResult(pw, "virtual media ejected, powered off"), nil
}

// Adopt reads the power of a running host and changes nothing.
func (p *Provisioner) Adopt(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.readPower(ctx, h, "adopted: running host taken over without a power change")
}

// Detach has no back-end record to delete and sends nothing to the BMC
// (not even a session logout: the session is simply left to expire); the
// host's config drive is no longer served.
func (p *Provisioner) Detach(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	p.forgetDrive(h)
	return provisioner.Result{Message: "detached: nothing to delete without Ironic"}, nil
}

// Delete logs out of the host's BMC and stops serving its config drive;
// there is no back-end record.
func (p *Provisioner) Delete(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	p.forgetDrive(h)
	p.pool.Forget(ctx, h.Name)
	return provisioner.Result{}, nil
}

// SetMaintenance has no back-end flag without Ironic; the state machine
// stops asserting power while the host is in maintenance.
func (p *Provisioner) SetMaintenance(ctx context.Context, h provisioner.Host, on bool) (provisioner.Result, error) {
	return provisioner.Result{}, nil
}

// SetPower powers the host on or off and returns once the BMC reads the
// new state back (bmc.Conn.SetPowerRead: bmc.ErrPowerNotConfirmed after
// the BMC options' PowerTimeout); a BMC reporting no power state leaves
// PoweredOn nil.
func (p *Provisioner) SetPower(ctx context.Context, h provisioner.Host, on bool) (provisioner.Result, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	p.soft.Forget(h.Name)
	pw, err := c.SetPowerRead(ctx, p.guard, h.Name, on)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	return powerResult(pw, ""), nil
}

// PowerState reads the power (read-only, not guarded).
func (p *Provisioner) PowerState(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.readPower(ctx, h, "")
}
