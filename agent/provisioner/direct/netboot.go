package direct

import (
	"context"
	"fmt"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// bootMethod is how the host's image is booted: the spec's bootMethod,
// else virtual media when the BMC has a device taking CD or DVD, else
// UEFI HTTP where the system offers it (UefiHttp and HttpBootUri; UEFI
// boot modes only), else PXE. A spec's method the BMC cannot do is
// refused with ErrUnsupported, before anything changes.
func (p *Provisioner) bootMethod(ctx context.Context, h provisioner.Host, c *bmc.Conn) (string, error) {
	o, err := c.BootOffer(ctx)
	if err != nil {
		return "", err
	}
	legacy := h.BootMode == wire.BootModeLegacy
	switch h.BootMethod {
	case wire.BootMethodVirtualMedia:
		if c.Protocol() == "ipmi" {
			return "", fmt.Errorf("%w: host %s: bootMethod vmedia, but IPMI has no virtual media: use bootMethod pxe (or none) or a redfish:// BMC address", errclass.ErrUnsupported, h.Name)
		}
		return wire.BootMethodVirtualMedia, nil // the insert names what was searched when there is none
	case wire.BootMethodUEFIHTTP:
		if c.Protocol() == "ipmi" {
			return "", fmt.Errorf("%w: host %s: bootMethod uefihttp, but IPMI has no UEFI HTTP boot: use bootMethod pxe (or none) or a redfish:// BMC address", errclass.ErrUnsupported, h.Name)
		}
		if legacy {
			return "", fmt.Errorf("%w: host %s: bootMethod uefihttp needs a UEFI boot mode, not bootMode legacy", errclass.ErrUnsupported, h.Name)
		}
		return wire.BootMethodUEFIHTTP, nil // SetNetworkBoot names what the system lacks
	case wire.BootMethodPXE:
		return wire.BootMethodPXE, nil
	}
	switch {
	case o.VirtualMedia:
		return wire.BootMethodVirtualMedia, nil
	case o.UEFIHTTP && !legacy:
		return wire.BootMethodUEFIHTTP, nil
	case o.PXE:
		return wire.BootMethodPXE, nil
	}
	// Nothing offered: the virtual media error names what was searched.
	return wire.BootMethodVirtualMedia, nil
}

// provisionNetwork boots the host once from the network and powers it
// on: PXE (the site's DHCP/PXE serves the image), or UEFI HTTP from the
// image's URL (the rack's artifact server when its image cache is on;
// while the cache fetches the image the host is in progress).
func (p *Provisioner) provisionNetwork(ctx context.Context, h provisioner.Host, c *bmc.Conn, method, mode string) (provisioner.Result, error) {
	if h.ConfigDrive != nil {
		return provisioner.Result{}, fmt.Errorf("%w: host %s has userData/networkData/metaData, which the direct provisioner inserts as a config drive by virtual media; bootMethod %s boots from the network and inserts none: use bootMethod vmedia on a BMC with virtual media, or --provisioner ironic",
			errclass.ErrUnsupported, h.Name, method)
	}
	uri, msg := "", "booting once from the network (PXE): the site's DHCP and PXE server serve the image"
	if method == wire.BootMethodUEFIHTTP {
		image, ready, err := p.imageURL(ctx, h)
		if err != nil {
			return provisioner.Result{}, err
		}
		if !ready {
			return provisioner.Result{InProgress: true, Message: "the rack's image cache is fetching and verifying the image"}, nil
		}
		uri, msg = image, "booting once by UEFI HTTP from the image's URL"
		if image != h.Image.URL {
			msg = "booting once by UEFI HTTP from the rack's image cache"
		}
	}
	if err := c.SetNetworkBoot(ctx, p.guard, h.Name, method, uri, mode); err != nil {
		return provisioner.Result{}, p.done(h, fmt.Errorf("one-time network boot (bootMethod %s): %w", method, err))
	}
	pw, err := c.SetPowerRead(ctx, p.guard, h.Name, true)
	if err != nil {
		return provisioner.Result{}, p.done(h, fmt.Errorf("power on: %w", err))
	}
	return powerResult(pw, msg), nil
}
