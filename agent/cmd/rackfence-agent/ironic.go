package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// newIronic builds the Ironic provisioner (--provisioner ironic). Hosts
// whose node cannot inspect (inspect interface no-inspect, e.g. ipmi, or
// --ironic-redfish-inspect no-inspect) get their details from the BMC
// inventory (read-only, through a session pool of their own); Redfish
// hosts are inspected by Ironic's redfish inspect interface when Ironic
// enables it.
func newIronic(o *Config, g *guard.Guard, bmcOpts bmc.Options, log *slog.Logger) (provisioner.Provisioner, func(), error) {
	var token string
	if o.ironicTokenFile != "" {
		t, err := client.ReadTokenFile(o.ironicTokenFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--ironic-token-file: %w", err)
		}
		token = t
	}
	pool := bmc.NewPool(bmcOpts)
	inventory := func(ctx context.Context, h provisioner.Host) (*wire.HardwareDetails, error) {
		c, err := pool.Get(ctx, h.Name, bmc.Target{Address: h.BMC.Address, Username: h.Username,
			Password: h.Password, Insecure: h.BMC.DisableCertificateVerification})
		if err != nil {
			return nil, err
		}
		return c.Inventory(ctx)
	}
	// What the BMC is, read once at registration (read-only GETs; Ironic
	// alone changes the host). IPMI BMCs have nothing to read beyond that.
	details := func(ctx context.Context, h provisioner.Host) (*wire.BMCDetails, error) {
		if s, err := wire.ParseBMCAddress(h.BMC.Address); err == nil && s.Protocol == "ipmi" {
			return &wire.BMCDetails{Protocol: "ipmi", Auth: "ipmi"}, nil
		}
		c, err := pool.Get(ctx, h.Name, bmc.Target{Address: h.BMC.Address, Username: h.Username,
			Password: h.Password, Insecure: h.BMC.DisableCertificateVerification})
		if err != nil {
			return nil, err
		}
		return c.Details(ctx)
	}
	// Day two through Ironic: done is the BMC's firmware inventory (read
	// here, read-only), not Ironic's word.
	firmwarePending := func(ctx context.Context, h provisioner.Host, fw []wire.FirmwareComponent) ([]wire.FirmwareComponent, error) {
		c, err := pool.Get(ctx, h.Name, bmc.Target{Address: h.BMC.Address, Username: h.Username,
			Password: h.Password, Insecure: h.BMC.DisableCertificateVerification})
		if err != nil {
			return nil, err
		}
		items, err := c.FirmwareInventory(ctx)
		if err != nil {
			return nil, err
		}
		var pending []wire.FirmwareComponent
		for _, comp := range fw {
			if it, ok := bmc.FindFirmware(items, comp.Component); !ok || !bmc.VersionMatches(it.Version, comp.Version) {
				pending = append(pending, comp)
			}
		}
		return pending, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := ironic.New(ctx, ironic.Config{URL: o.ironicURL, Token: token, Guard: g,
		Timeout: o.mutationTimeout, MutationTimeout: o.mutationTimeout, Logger: log, Inventory: inventory, BMCDetails: details,
		RedfishInspect: o.ironicRedfishInspect, RedfishVirtualMedia: o.ironicRedfishVMedia,
		SoftPowerOffTimeout: o.softOffTimeout,
		DeployKernel:        o.ironicDeployKernel, DeployRamdisk: o.ironicDeployRamdisk, DeployISO: o.ironicDeployISO,
		NamedBIOS: bmc.NamedBIOSAttributes, FirmwarePending: firmwarePending})
	if err != nil {
		return nil, nil, err
	}
	return p, closeWithin(pool.Close), nil
}
