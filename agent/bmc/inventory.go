package bmc

import (
	"context"
	"fmt"
	"strings"

	bmclib "github.com/bmc-toolbox/bmclib/v2"
	"github.com/bmc-toolbox/common"

	"github.com/rackfence/rackfence/shared/api"
)

// Inventory reads the hardware: vendor, model, serial, BIOS version, CPUs,
// memory, NICs with their MACs, disks and firmware versions (Redfish). It
// reads the standard resources in parallel under bmclib's session (see
// fastInventory) and falls back to bmclib's sequential Inventory when that
// fails (unusual layouts), or always with Options.BMCLibInventory.
// Over IPMI it answers ErrUnsupported: ipmitool has no inventory in bmclib.
func (c *Conn) Inventory(ctx context.Context) (*api.HardwareDetails, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: inventory needs a Redfish BMC; %s is %s", ErrUnsupported, c.addr, c.proto)
	}
	var hd *api.HardwareDetails
	err := c.call(ctx, "inventory", func(ctx context.Context, cl *bmclib.Client) error {
		if !c.opts.BMCLibInventory {
			fast, err := c.fastInventory(ctx)
			if err == nil {
				hd = fast
				return nil
			}
			if c.tr.authRefused() || ctx.Err() != nil {
				return err // re-login (in call) or give up; bmclib would fail too
			}
			c.opts.Logger.Debug("parallel inventory failed; using bmclib's", "bmc", c.addr, "err", c.scrub(err.Error()))
		}
		d, err := cl.Inventory(ctx)
		if err != nil {
			return err
		}
		hd = convertInventory(d)
		return nil
	})
	return hd, err
}

func convertInventory(d *common.Device) *api.HardwareDetails {
	hd := &api.HardwareDetails{}
	if d == nil {
		return hd
	}
	hd.Manufacturer, hd.Model, hd.SerialNumber = d.Vendor, d.Model, d.Serial
	if d.BIOS != nil && d.BIOS.Firmware != nil {
		hd.BIOSVersion = d.BIOS.Firmware.Installed
		hd.Firmware = append(hd.Firmware, api.Firmware{Name: "BIOS", Version: d.BIOS.Firmware.Installed})
	}
	if d.BMC != nil && d.BMC.Firmware != nil && d.BMC.Firmware.Installed != "" {
		hd.Firmware = append(hd.Firmware, api.Firmware{Name: "BMC", Version: d.BMC.Firmware.Installed})
	}
	for _, p := range d.CPUs {
		if p == nil {
			continue
		}
		hd.CPUs = append(hd.CPUs, api.CPU{Model: strings.TrimSpace(p.Model), Cores: p.Cores, Threads: p.Threads})
	}
	var mem int64
	for _, m := range d.Memory {
		if m != nil {
			mem += m.SizeBytes
		}
	}
	hd.MemoryMiB = int(mem >> 20)
	for _, n := range d.NICs {
		if n == nil {
			continue
		}
		for _, p := range n.NICPorts {
			if p == nil || p.MacAddress == "" {
				continue
			}
			name := p.ID
			if name == "" {
				name = n.ID
			}
			hd.NICs = append(hd.NICs, api.NIC{Name: name, MAC: strings.ToLower(p.MacAddress), SpeedMbps: int(p.SpeedBits / 1_000_000)})
		}
	}
	for _, dr := range d.Drives {
		if dr == nil {
			continue
		}
		name := dr.ID
		if name == "" {
			name = dr.LogicalName
		}
		hd.Disks = append(hd.Disks, api.Disk{Name: name, Model: dr.Model, SizeBytes: dr.CapacityBytes, Type: dr.Type})
	}
	return hd
}
