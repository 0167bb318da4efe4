package bmc

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// Network boot on Redfish: a one-time BootSourceOverrideTarget Pxe, or
// UefiHttp with HttpBootUri the image's URL, in the host's boot mode;
// every change is read back (Target, Enabled, HttpBootUri) and fails with
// errclass.ErrFailed naming what the BMC kept when it did not take.

// Network boot methods of SetNetworkBoot.
const (
	NetBootPXE      = "pxe"
	NetBootUEFIHTTP = "uefihttp"
)

// Redfish BootSourceOverrideTarget values of network boot.
const (
	rfTargetPxe      = "Pxe"
	rfTargetUefiHttp = "UefiHttp"
)

// BootOffer is what a host's BMC offers to boot an image from.
type BootOffer struct {
	// VirtualMedia: a virtual media device taking CD or DVD.
	VirtualMedia bool
	// PXE: a one-time boot from the network (Redfish: Pxe among the
	// system's BootSourceOverrideTarget@Redfish.AllowableValues, or no
	// such list; IPMI: always).
	PXE bool
	// UEFIHTTP: UefiHttp among the allowable targets (or no list) and an
	// HttpBootUri property to point at the image.
	UEFIHTTP bool
	// Targets are the allowable targets the system lists (nil: none
	// listed), for messages.
	Targets []string
}

// BootOffer reads, changing nothing, how the BMC can boot an image
// (discovery's cached view: no request after the first call).
func (c *Conn) BootOffer(ctx context.Context) (BootOffer, error) {
	if c.proto != "redfish" {
		return BootOffer{PXE: true}, nil
	}
	var o BootOffer
	err := c.rfCall(ctx, "read boot offer", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err != nil {
			return err
		}
		if err := c.findVirtualMedia(s, d); err != nil {
			return err
		}
		o = offerOf(d)
		return nil
	})
	return o, err
}

func offerOf(d *rfDiscovery) BootOffer {
	allowed := func(t string) bool { return len(d.bootTargets) == 0 || slices.Contains(d.bootTargets, t) }
	return BootOffer{VirtualMedia: d.vmedia != "", PXE: allowed(rfTargetPxe),
		UEFIHTTP: allowed(rfTargetUefiHttp) && d.httpBootURI, Targets: slices.Clone(d.bootTargets)}
}

// NoVirtualMedia says what was searched when the BMC has no virtual media
// device taking CD or DVD, "" when it has one (Redfish; IPMI has none:
// "IPMI has no virtual media"). A BMC that boots from the network lacks
// none for provisioning (Details names no problem then): the direct
// provisioner asks this when a host wants a config drive.
func (c *Conn) NoVirtualMedia(ctx context.Context) (string, error) {
	if c.proto != "redfish" {
		return "IPMI has no virtual media", nil
	}
	var out string
	err := c.rfCall(ctx, "virtual media", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err == nil {
			err = c.findVirtualMedia(s, d)
		}
		if err == nil && d.vmedia == "" {
			out = d.noVMedia
		}
		return err
	})
	return out, err
}

// SetNetworkBoot sets a one-time boot from the network, under the guard,
// in a boot mode ("" or UEFI, or Legacy; see SetBootDeviceMode): method
// pxe (BootSourceOverrideTarget Pxe), or uefihttp (UefiHttp with
// HttpBootUri uri, Redfish only). A method the system does not offer is
// refused with errclass.ErrUnsupported before anything changes; a change the BMC
// accepts but does not keep (read back) fails with errclass.ErrFailed naming what
// it reads.
func (c *Conn) SetNetworkBoot(ctx context.Context, g *guard.Guard, host, method, uri, mode string) error {
	switch method {
	case NetBootPXE:
	case NetBootUEFIHTTP:
		if c.proto != "redfish" {
			return fmt.Errorf("%w: %s: IPMI has no UEFI HTTP boot: use bootMethod pxe or a redfish:// BMC address", errclass.ErrUnsupported, c.addr)
		}
		if uri == "" {
			return fmt.Errorf("%w: UEFI HTTP boot needs the image's URL", errclass.ErrFailed)
		}
	default:
		return fmt.Errorf("%w: network boot method %q is not pxe or uefihttp", errclass.ErrUnsupported, method)
	}
	if c.proto != "redfish" {
		return c.SetBootDeviceMode(ctx, g, host, "pxe", false, mode)
	}
	if mode != "" && mode != BootModeUEFI && mode != BootModeLegacy {
		return fmt.Errorf("%w: boot mode %q is not UEFI or Legacy", errclass.ErrUnsupported, mode)
	}
	if err := c.rfCheckNetBoot(ctx, method, mode); err != nil {
		return err
	}
	op := "boot " + method
	target := redfish.BootSourceOverrideTarget(rfTargetPxe)
	if method == NetBootUEFIHTTP {
		target = rfTargetUefiHttp
	}
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			d, sys, err := c.systemEntity(s)
			if err != nil {
				return err
			}
			b := redfish.Boot{BootSourceOverrideTarget: target, BootSourceOverrideEnabled: redfish.OnceBootSourceOverrideEnabled}
			switch {
			case mode == BootModeLegacy:
				b.BootSourceOverrideMode = redfish.LegacyBootSourceOverrideMode
			case d.bootModeProp && (len(d.bootModeAllowed) == 0 || slices.Contains(d.bootModeAllowed, "UEFI")):
				b.BootSourceOverrideMode = redfish.UEFIBootSourceOverrideMode
			}
			if method == NetBootUEFIHTTP {
				b.HTTPBootURI = uri
			}
			if err := sys.SetBoot(b); err != nil {
				if method == NetBootUEFIHTTP {
					return fmt.Errorf("the BMC refused UEFI HTTP boot from HttpBootUri %q: %w", uri, err)
				}
				return err
			}
			return c.readBackBoot(s, d, b)
		})
	})
}

// rfCheckNetBoot refuses, before the guard, a network boot the system
// does not offer (or a mode it cannot take). Read-only.
func (c *Conn) rfCheckNetBoot(ctx context.Context, method, mode string) error {
	if err := c.rfCheckBootMode(ctx, mode); err != nil {
		return err
	}
	return c.rfCall(ctx, "read boot targets", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err != nil {
			return err
		}
		o := offerOf(d)
		switch {
		case method == NetBootPXE && !o.PXE:
			return fmt.Errorf("%w: %s: %s offers boot targets %s, not Pxe: use another bootMethod", errclass.ErrUnsupported, c.addr, short(d.system), strings.Join(o.Targets, ", "))
		case method == NetBootUEFIHTTP && !o.UEFIHTTP && !d.httpBootURI:
			return fmt.Errorf("%w: %s: %s has no Boot.HttpBootUri to point UEFI HTTP boot at the image: use bootMethod pxe or vmedia", errclass.ErrUnsupported, c.addr, short(d.system))
		case method == NetBootUEFIHTTP && !o.UEFIHTTP:
			return fmt.Errorf("%w: %s: %s offers boot targets %s, not UefiHttp: use bootMethod pxe or vmedia", errclass.ErrUnsupported, c.addr, short(d.system), strings.Join(o.Targets, ", "))
		}
		return nil
	})
}

// rfBootReadBack is the part of a ComputerSystem a boot change reads back.
type rfBootReadBack struct {
	Boot struct {
		BootSourceOverrideTarget  string
		BootSourceOverrideEnabled string
		HttpBootUri               *string //nolint:revive // the Redfish property's name
	}
}

// readBackBoot reads the system's Boot after a change and fails with
// errclass.ErrFailed when the target or (UEFI HTTP) the URI did not take. A Once
// override already consumed (Enabled Disabled with the target kept) is
// not expected here: the system is powered on only after this returns.
func (c *Conn) readBackBoot(s *rfSession, d *rfDiscovery, want redfish.Boot) error {
	var back rfBootReadBack
	if err := rfGet(s.api, d.system, &back); err != nil {
		return err
	}
	b := back.Boot
	if b.BootSourceOverrideTarget != string(want.BootSourceOverrideTarget) || b.BootSourceOverrideEnabled == string(redfish.DisabledBootSourceOverrideEnabled) {
		return fmt.Errorf("%w: %s: the BMC accepted a one-time boot from %s but %s reads back BootSourceOverrideTarget %q, BootSourceOverrideEnabled %q",
			errclass.ErrFailed, c.addr, want.BootSourceOverrideTarget, short(d.system), b.BootSourceOverrideTarget, b.BootSourceOverrideEnabled)
	}
	if want.HTTPBootURI != "" {
		got := ""
		if b.HttpBootUri != nil {
			got = *b.HttpBootUri
		}
		if got != want.HTTPBootURI {
			return fmt.Errorf("%w: %s: the BMC accepted HttpBootUri %q but %s reads back %q: it does not take that URL (check that the BMC can use an %s URL, and the artifact server's --artifact-url as the BMC reaches it)",
				errclass.ErrFailed, c.addr, want.HTTPBootURI, short(d.system), got, schemeOf(want.HTTPBootURI))
		}
	}
	return nil
}

func schemeOf(u string) string {
	if s, _, ok := strings.Cut(u, "://"); ok {
		return s
	}
	return "absolute"
}
