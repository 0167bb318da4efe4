package ironic

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Inspect reads hardware details. Hosts that carry details already (pivoted
// in) are not inspected again (a re-inspection passes none). An available
// node (re-inspection) is managed first and left manageable: Provide
// follows. When the node's inspect interface can
// inspect, a manageable node goes manageable → inspecting → manageable and
// the details come from Ironic's inventory (or its node properties);
// otherwise (no-inspect) from Config.Inventory, the BMC's own inventory.
func (p *Provisioner) Inspect(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	res := provisioner.Result{ProvisioningID: n.UUID, PoweredOn: poweredOn(n)}
	if h.HardwareDetails != nil {
		res.HardwareDetails = h.HardwareDetails
		res.Message = "hardware details carried over; not inspected again"
		return res, nil
	}
	if n.InspectInterface != "" && n.InspectInterface != "no-inspect" {
		switch {
		case n.ProvisionState == string(nodes.Available):
			// Re-inspection (the inspect intent) of an available node:
			// manage first; provide follows the inspection (Provide).
			r, err := p.transitionFrom(ctx, h, n, "manage", nodes.TargetManage,
				[]nodes.ProvisionState{nodes.Available}, []nodes.ProvisionState{nodes.Manageable})
			if err != nil || r.InProgress {
				res.InProgress = r.InProgress
				return res, err
			}
			fallthrough
		case n.ProvisionState == string(nodes.Manageable) || n.ProvisionState == string(nodes.InspectFail):
			if err := p.changeProvisionState(ctx, h, n.UUID, nodes.TargetInspect); err != nil {
				return res, err
			}
			fallthrough
		case n.ProvisionState == string(nodes.Inspecting) || n.ProvisionState == string(nodes.InspectWait):
			n2, inProgress, err := p.waitFor(ctx, h, n.UUID, "inspect", inState(nodes.Manageable), nil)
			if err != nil || inProgress {
				res.InProgress = inProgress
				return res, err
			}
			n = n2
		}
		res.HardwareDetails = p.ironicDetails(ctx, n)
	}
	if res.HardwareDetails == nil && p.cfg.Inventory != nil {
		d, err := p.cfg.Inventory(ctx, h)
		if err != nil {
			return res, fmt.Errorf("%w: inspect host %s through its BMC inventory: %v", errclass.ErrFailed, h.Name, err)
		}
		res.HardwareDetails = d
		res.Message = "hardware details from the BMC inventory"
		return res, nil
	}
	if res.HardwareDetails == nil {
		res.HardwareDetails = detailsFromProperties(n.Properties)
	}
	res.Message = "hardware details from Ironic"
	return res, nil
}

// ironicDetails reads GET /v1/nodes/{id}/inventory (microversion 1.81),
// falling back to the node's properties; nil when both are empty.
func (p *Provisioner) ironicDetails(ctx context.Context, n *nodes.Node) *wire.HardwareDetails {
	cctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	if inv, err := nodes.GetInventory(cctx, p.client, n.UUID).Extract(); err == nil {
		i := inv.Inventory
		d := &wire.HardwareDetails{
			Manufacturer: i.SystemVendor.Manufacturer,
			Model:        i.SystemVendor.ProductName,
			SerialNumber: i.SystemVendor.SerialNumber,
			BIOSVersion:  i.SystemVendor.Firmware.Version,
			MemoryMiB:    i.Memory.PhysicalMb,
		}
		if i.CPU.Count > 0 {
			d.CPUs = []wire.CPU{{Model: i.CPU.ModelName, Threads: i.CPU.Count}}
		}
		for _, nic := range i.Interfaces {
			d.NICs = append(d.NICs, wire.NIC{Name: nic.Name, MAC: nic.MACAddress, SpeedMbps: nic.SpeedMbps})
		}
		for _, disk := range i.Disks {
			t := "SSD"
			if disk.Rotational {
				t = "HDD"
			}
			d.Disks = append(d.Disks, wire.Disk{Name: disk.Name, Model: disk.Model, SizeBytes: disk.Size, Type: t})
		}
		if d.Manufacturer != "" || d.MemoryMiB > 0 || len(d.CPUs) > 0 {
			return d
		}
	}
	d := detailsFromProperties(n.Properties)
	if d != nil {
		// Ironic's redfish inspect interface stores no inventory: the
		// NICs it found are the node's ports (one per enabled
		// EthernetInterface, plus the boot MAC's).
		d.NICs = p.portNICs(cctx, n.UUID)
	}
	return d
}

// portNICs lists the node's ports as NICs (MAC only); nil on error.
func (p *Provisioner) portNICs(ctx context.Context, uuid string) []wire.NIC {
	page, err := ports.ListDetail(p.client, ports.ListOpts{NodeUUID: uuid}).AllPages(ctx)
	if err != nil {
		return nil
	}
	all, err := ports.ExtractPorts(page)
	if err != nil {
		return nil
	}
	var nics []wire.NIC
	for _, pt := range all {
		nics = append(nics, wire.NIC{MAC: pt.Address})
	}
	return nics
}

// detailsFromProperties maps Ironic's scheduling properties, all that
// Ironic's redfish inspect interface records: cpus (logical CPUs: one CPU
// entry with that many threads, its model the architecture), memory_mb,
// local_gb (one disk "root" of that size) and cpu_arch; nil when none is
// set.
func detailsFromProperties(props map[string]any) *wire.HardwareDetails {
	num := func(k string) int {
		switch v := props[k].(type) {
		case float64:
			return int(v)
		case string:
			var x int
			fmt.Sscan(v, &x)
			return x
		}
		return 0
	}
	d := &wire.HardwareDetails{MemoryMiB: num("memory_mb")}
	if c := num("cpus"); c > 0 {
		arch, _ := props["cpu_arch"].(string)
		d.CPUs = []wire.CPU{{Model: arch, Threads: c}}
	}
	if gb := num("local_gb"); gb > 0 {
		d.Disks = []wire.Disk{{Name: "root", SizeBytes: int64(gb) << 30}}
	}
	if d.MemoryMiB == 0 && d.CPUs == nil && d.Disks == nil {
		return nil
	}
	return d
}
