package ironic

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Register finds the host's node (by UUID, then name, then boot MAC) or
// creates it with the driver and driver_info of the host's BMC, makes sure
// the boot MAC is a port of it, and, while the node is in enroll, manages it:
// Ironic then checks the BMC credentials by reading the power state (no
// power change). A failed verify is an error carrying Ironic's last_error
// (ErrAuth when the BMC refused the credentials). Blocks until manageable,
// or returns InProgress after Config.WaitTimeout.
func (p *Provisioner) Register(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	driver, info, err := p.driverFor(h)
	if err != nil {
		return provisioner.Result{}, err
	}
	n, err := p.find(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	log := p.log.With("host", h.Name)
	created := n == nil
	if created {
		props := map[string]any{}
		if h.BootMode != "" {
			props["capabilities"] = capabilities("", h.BootMode)
		}
		if rd := rootDevice(h.RootDeviceHints); rd != nil {
			props["root_device"] = rd
		}
		opts := nodes.CreateOpts{Name: h.Name, Driver: driver, DriverInfo: info, ResourceClass: p.cfg.ResourceClass,
			AutomatedClean: autoClean(h.AutomatedCleaningMode)}
		if len(props) > 0 {
			opts.Properties = props
		}
		if driver == "redfish" {
			opts.InspectInterface = p.redfish.inspect
		}
		p.setInterfaces(&opts)
		n, err = p.createNode(ctx, h, opts)
		if err != nil {
			return provisioner.Result{}, err
		}
		log.Info("ironic node created", "node", n.UUID, "driver", driver)
	} else if n.Name == "" {
		if err := p.updateNode(ctx, h, n.UUID, "set name", nodes.UpdateOpts{
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/name", Value: h.Name}}); err != nil {
			return provisioner.Result{}, err
		}
	}
	res := provisioner.Result{ProvisioningID: n.UUID}
	if err := p.syncSpec(ctx, h, n); err != nil {
		return res, err
	}
	if created && h.BootMACAddress != "" {
		// find looked the MAC up and no port held it.
		if err := p.createPort(ctx, h, n.UUID, strings.ToLower(h.BootMACAddress)); err != nil {
			return res, err
		}
	} else if err := p.ensurePort(ctx, h, n.UUID); err != nil {
		return res, err
	}
	switch n.ProvisionState {
	case string(nodes.Enroll):
		// Rewrite driver_info of an existing node: the credentials may have
		// been fixed since the last failed verify (Ironic masks passwords,
		// so a change cannot be seen).
		if !created {
			if err := p.updateNode(ctx, h, n.UUID, "set driver_info", nodes.UpdateOpts{
				nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info", Value: info}}); err != nil {
				return res, err
			}
		}
		if err := p.changeProvisionState(ctx, h, n.UUID, nodes.TargetManage); err != nil {
			return res, err
		}
	case string(nodes.Verifying):
	default:
		if driverInfoChanged(n.DriverInfo, info) {
			if err := p.updateNode(ctx, h, n.UUID, "set driver_info", nodes.UpdateOpts{
				nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info", Value: info}}); err != nil {
				return res, err
			}
		}
		res.PoweredOn = poweredOn(n)
		res.Message = "Ironic node " + n.UUID + " is " + n.ProvisionState
		return res, nil
	}
	n, inProgress, err := p.waitFor(ctx, h, n.UUID, "manage", inState(nodes.Manageable),
		func(n *nodes.Node) bool {
			return n.ProvisionState == string(nodes.Enroll) && n.TargetProvisionState == ""
		})
	if err != nil {
		if n != nil && n.ProvisionState == string(nodes.Enroll) {
			class := ErrVerify
			if authFailure(n.LastError) {
				class = ErrVerifyAuth
			}
			return res, fmt.Errorf("%w: host %s (%s): %s", class, h.Name, h.BMC.Address, strings.TrimSpace(lastError(n)))
		}
		return res, err
	}
	res.InProgress = inProgress
	res.PoweredOn = poweredOn(n)
	if !inProgress {
		res.Message = "registered as Ironic node " + n.UUID
		log.Info("ironic node manageable", "node", n.UUID)
		res.BMCDetails = p.bmcDetails(ctx, h)
	}
	return res, nil
}

// bmcDetails asks Config.BMCDetails what the BMC is; nil when there is no
// hook, Ironic talks to no BMC (Config.Driver), or the read failed.
func (p *Provisioner) bmcDetails(ctx context.Context, h provisioner.Host) *wire.BMCDetails {
	if p.cfg.BMCDetails == nil || p.cfg.Driver != "" {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	d, err := p.cfg.BMCDetails(cctx, h)
	if err != nil {
		p.log.Info("could not read what the BMC is; the host's status leaves it out", "host", h.Name, "err", err)
		return nil
	}
	return d
}

// setInterfaces copies Config.Interfaces into the create options.
func (p *Provisioner) setInterfaces(o *nodes.CreateOpts) {
	for k, v := range p.cfg.Interfaces {
		switch k {
		case "bios":
			o.BIOSInterface = v
		case "boot":
			o.BootInterface = v
		case "console":
			o.ConsoleInterface = v
		case "deploy":
			o.DeployInterface = v
		case "inspect":
			o.InspectInterface = v
		case "management":
			o.ManagementInterface = v
		case "network":
			o.NetworkInterface = v
		case "power":
			o.PowerInterface = v
		case "raid":
			o.RAIDInterface = v
		case "rescue":
			o.RescueInterface = v
		case "storage":
			o.StorageInterface = v
		case "vendor":
			o.VendorInterface = v
		}
	}
}

// ensurePort creates the boot MAC's port on the node when it is missing.
func (p *Provisioner) ensurePort(ctx context.Context, h provisioner.Host, uuid string) error {
	if h.BootMACAddress == "" {
		return nil
	}
	port, err := p.portByMAC(ctx, h.BootMACAddress)
	if err != nil {
		return err
	}
	if port != nil {
		if port.NodeUUID != uuid {
			return fmt.Errorf("%w: %s of host %s is a port of node %s: remove that port or fix bootMACAddress",
				ErrMACInUse, h.BootMACAddress, h.Name, port.NodeUUID)
		}
		return nil
	}
	return p.createPort(ctx, h, uuid, strings.ToLower(h.BootMACAddress))
}
