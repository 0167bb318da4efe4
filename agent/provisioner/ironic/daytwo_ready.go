package ironic

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// What a node needs before a day-two clean can start.

// canClean checks, before anything changes, that the node's interfaces
// run the steps the spec needs and that Ironic can boot its agent
// ramdisk (named by the node or by Config).
func (p *Provisioner) canClean(h provisioner.Host, n *nodes.Node, spec provisioner.DayTwoSpec) error {
	need := map[nodes.StepInterface]string{}
	if len(spec.Firmware) > 0 {
		need[nodes.InterfaceManagement] = n.ManagementInterface
	}
	if spec.BIOS != nil {
		need[nodes.InterfaceBIOS] = n.BIOSInterface
	}
	if spec.RAID != nil && len(spec.RAID.HardwareRAIDVolumes) > 0 {
		need[nodes.InterfaceRAID] = n.RAIDInterface
	}
	for _, k := range []nodes.StepInterface{nodes.InterfaceManagement, nodes.InterfaceBIOS, nodes.InterfaceRAID} {
		if iface, ok := need[k]; ok && iface != "redfish" {
			return fmt.Errorf("%w: host %s: Ironic applies %s through the node's %s_interface redfish, and node %s has %q (enable redfish in Ironic's enabled_%s_interfaces and set the node's %s_interface)",
				errclass.ErrUnsupported, h.Name, dayTwoPart(k), k, n.UUID, iface, k, k)
		}
	}
	if nodeRamdisk(n) || p.cfg.DeployISO != "" || (p.cfg.DeployKernel != "" && p.cfg.DeployRamdisk != "") {
		return nil
	}
	return fmt.Errorf("%w: host %s: Ironic 21.4 runs its redfish BIOS, RAID and firmware clean steps only with its agent ramdisk booted on the host (each step requires it), and neither node %s nor this agent names one: set the agent's --ironic-deploy-kernel and --ironic-deploy-ramdisk (or the node's driver_info deploy_kernel/deploy_ramdisk), or remove the change",
		ErrNeedsAgentRamdisk, h.Name, n.UUID)
}

func dayTwoPart(k nodes.StepInterface) string {
	switch k {
	case nodes.InterfaceBIOS:
		return "BIOS settings"
	case nodes.InterfaceRAID:
		return "hardware RAID"
	}
	return "firmware updates"
}

func nodeRamdisk(n *nodes.Node) bool {
	has := func(k string) bool { v, _ := n.DriverInfo[k].(string); return v != "" }
	return has("deploy_iso") || (has("deploy_kernel") && has("deploy_ramdisk"))
}

// setRamdisk writes Config's agent ramdisk into driver_info when the
// node names none.
func (p *Provisioner) setRamdisk(ctx context.Context, h provisioner.Host, n *nodes.Node) error {
	if nodeRamdisk(n) {
		return nil
	}
	patch := nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info/deploy_iso", Value: p.cfg.DeployISO}}
	if p.cfg.DeployISO == "" {
		patch = nodes.UpdateOpts{
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info/deploy_kernel", Value: p.cfg.DeployKernel},
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info/deploy_ramdisk", Value: p.cfg.DeployRamdisk}}
	}
	return p.updateNode(ctx, h, n.UUID, "set the agent ramdisk in driver_info", patch)
}
