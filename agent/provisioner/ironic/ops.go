package ironic

import (
	"context"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"

	"github.com/rackfence/rackfence/agent/provisioner"
)

// Every mutating Ironic call is here, each lexically inside the func literal
// passed to Guard.Do (agent/guard's go/ast test checks that). The guard checks
// the rack lease right before the call and bounds it by Config.MutationTimeout.

func (p *Provisioner) createNode(ctx context.Context, h provisioner.Host, opts nodes.CreateOpts) (*nodes.Node, error) {
	var n *nodes.Node
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.create-node", p.cfg.MutationTimeout, func(ctx context.Context) error {
		var err error
		n, err = nodes.Create(ctx, p.client, opts).Extract()
		return err
	})
	return n, classify(err, "create Ironic node for host "+h.Name)
}

func (p *Provisioner) createPort(ctx context.Context, h provisioner.Host, nodeUUID, mac string) error {
	pxe := true
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.create-port", p.cfg.MutationTimeout, func(ctx context.Context) error {
		_, err := ports.Create(ctx, p.client, ports.CreateOpts{NodeUUID: nodeUUID, Address: mac, PXEEnabled: &pxe}).Extract()
		return err
	})
	return classify(err, "create port "+mac+" on node "+nodeUUID)
}

func (p *Provisioner) updateNode(ctx context.Context, h provisioner.Host, uuid, what string, patch nodes.UpdateOpts) error {
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.update-node", p.cfg.MutationTimeout, func(ctx context.Context) error {
		_, err := nodes.Update(ctx, p.client, uuid, patch).Extract()
		return err
	})
	return classify(err, what+" of node "+uuid)
}

func (p *Provisioner) changeProvisionState(ctx context.Context, h provisioner.Host, uuid string, target nodes.TargetProvisionState) error {
	opts := nodes.ProvisionStateOpts{Target: target}
	if target == nodes.TargetActive {
		// The deploy carries the config drive (configdrive.go).
		cd, err := configDrive(h, uuid)
		if err != nil {
			return err
		}
		if cd != nil {
			opts.ConfigDrive = cd
		}
	}
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.provision-"+string(target), p.cfg.MutationTimeout, func(ctx context.Context) error {
		return nodes.ChangeProvisionState(ctx, p.client, uuid, opts).ExtractErr()
	})
	return classify(err, "provision target "+string(target)+" for node "+uuid)
}

func (p *Provisioner) changePowerState(ctx context.Context, h provisioner.Host, uuid string, target nodes.TargetPowerState) error {
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.power", p.cfg.MutationTimeout, func(ctx context.Context) error {
		return nodes.ChangePowerState(ctx, p.client, uuid, nodes.PowerStateOpts{Target: target}).ExtractErr()
	})
	return classify(err, string(target)+" for node "+uuid)
}

// softPowerOff asks Ironic for "soft power off", bounded by timeout
// (Ironic's own wait; 0: its conductor's soft_power_off_timeout).
func (p *Provisioner) softPowerOff(ctx context.Context, h provisioner.Host, uuid string, timeout int) error {
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.soft-power-off", p.cfg.MutationTimeout, func(ctx context.Context) error {
		return nodes.ChangePowerState(ctx, p.client, uuid, nodes.PowerStateOpts{Target: nodes.SoftPowerOff, Timeout: timeout}).ExtractErr()
	})
	return classify(err, "soft power off for node "+uuid)
}

func (p *Provisioner) setMaintenance(ctx context.Context, h provisioner.Host, uuid, reason string) error {
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.maintenance-on", p.cfg.MutationTimeout, func(ctx context.Context) error {
		return nodes.SetMaintenance(ctx, p.client, uuid, nodes.MaintenanceOpts{Reason: reason}).ExtractErr()
	})
	return classify(err, "set maintenance on node "+uuid)
}

func (p *Provisioner) unsetMaintenance(ctx context.Context, h provisioner.Host, uuid string) error {
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.maintenance-off", p.cfg.MutationTimeout, func(ctx context.Context) error {
		return nodes.UnsetMaintenance(ctx, p.client, uuid).ExtractErr()
	})
	return classify(err, "unset maintenance on node "+uuid)
}

func (p *Provisioner) deleteNode(ctx context.Context, h provisioner.Host, uuid string) error {
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.delete-node", p.cfg.MutationTimeout, func(ctx context.Context) error {
		return nodes.Delete(ctx, p.client, uuid).ExtractErr()
	})
	return classify(err, "delete node "+uuid)
}

// cleanNode starts a manual clean of a manageable node with steps.
func (p *Provisioner) cleanNode(ctx context.Context, h provisioner.Host, uuid string, steps []nodes.CleanStep) error {
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.provision-clean", p.cfg.MutationTimeout, func(ctx context.Context) error {
		return nodes.ChangeProvisionState(ctx, p.client, uuid, nodes.ProvisionStateOpts{Target: nodes.TargetClean, CleanSteps: steps}).ExtractErr()
	})
	return classify(err, "manual clean ("+stepNames(steps)+") of node "+uuid)
}

// setRAIDConfig writes the node's target_raid_config.
func (p *Provisioner) setRAIDConfig(ctx context.Context, h provisioner.Host, uuid string, disks []nodes.LogicalDisk) error {
	err := p.cfg.Guard.Do(ctx, h.Name, "ironic.set-raid-config", p.cfg.MutationTimeout, func(ctx context.Context) error {
		return nodes.SetRAIDConfig(ctx, p.client, uuid, nodes.RAIDConfigOpts{LogicalDisks: disks}).ExtractErr()
	})
	return classify(err, "set target_raid_config of node "+uuid)
}
