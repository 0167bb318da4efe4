package ironic

import (
	"context"
	"errors"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// maintenanceReason is what rackfence writes as Ironic's maintenance_reason.
const (
	reasonDetach = "rackfence: detached (node removed without deprovisioning)"
	reasonDelete = "rackfence: deleting without deprovisioning"
	reasonDrain  = "rackfence: drain (maintenance)"
	// reasonVMediaReset: a failed virtual media deploy gets its
	// interfaces reset before the undeploy (Deprovision).
	reasonVMediaReset = "rackfence: resetting boot and deploy interfaces after a failed virtual media deploy"
)

// Detach stops Ironic's management without deprovisioning: maintenance on
// (Ironic then sends the BMC nothing, not even its power sync), then delete
// the node. An already missing node is success. No BMC command is sent.
func (p *Provisioner) Detach(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.remove(ctx, h, reasonDetach, "detached: Ironic node deleted without deprovisioning")
}

// Delete removes the node from Ironic. A node Ironic refuses to delete as it
// is (active, failed deploys) is put into maintenance first, so Delete never
// deprovisions; the state machine deprovisions or powers off before, when
// it wants that. A missing node is success.
func (p *Provisioner) Delete(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.remove(ctx, h, reasonDelete, "Ironic node deleted")
}

func (p *Provisioner) remove(ctx context.Context, h provisioner.Host, reason, msg string) (provisioner.Result, error) {
	n, err := p.find(ctx, h)
	if errors.Is(err, ErrMACInUse) {
		n, err = p.findNoMAC(ctx, h)
	}
	if err != nil {
		return provisioner.Result{}, err
	}
	if n == nil {
		return provisioner.Result{Message: "no Ironic node to delete"}, nil
	}
	res := provisioner.Result{ProvisioningID: n.UUID}
	if n.TargetProvisionState != "" && !n.Maintenance {
		return res, fmt.Errorf("%w: cannot delete node %s of host %s while Ironic moves it from %q to %q; try again when it settles",
			errclass.ErrTransient, n.UUID, h.Name, n.ProvisionState, n.TargetProvisionState)
	}
	if !n.Maintenance && !deletableAsIs(n.ProvisionState) {
		if err := p.setMaintenance(ctx, h, n.UUID, reason); err != nil {
			return res, err
		}
	}
	if err := p.deleteNode(ctx, h, n.UUID); err != nil && !errors.Is(err, errclass.ErrNotFound) {
		return res, err
	}
	p.log.host(h.Name, n.UUID).Info("ironic node deleted", "provision_state", n.ProvisionState)
	res.Message = msg
	return res, nil
}

// findNoMAC looks up by UUID and name only (deleting must not be blocked by
// a boot MAC conflict).
func (p *Provisioner) findNoMAC(ctx context.Context, h provisioner.Host) (*nodes.Node, error) {
	h.BootMACAddress = ""
	return p.find(ctx, h)
}

// deletableAsIs: states in which Ironic deletes a node without maintenance.
func deletableAsIs(state string) bool {
	switch nodes.ProvisionState(state) {
	case nodes.Enroll, nodes.Manageable, nodes.Available, nodes.AdoptFail, nodes.InspectFail, nodes.CleanFail:
		return true
	}
	return false
}

// SetMaintenance turns Ironic's maintenance flag on or off (drain
// maintenance). No power change: in maintenance Ironic does not assert
// power either.
func (p *Provisioner) SetMaintenance(ctx context.Context, h provisioner.Host, on bool) (provisioner.Result, error) {
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	res := provisioner.Result{ProvisioningID: n.UUID, PoweredOn: poweredOn(n)}
	switch {
	case on && !n.Maintenance:
		err = p.setMaintenance(ctx, h, n.UUID, reasonDrain)
		res.Message = "Ironic maintenance on"
	case !on && n.Maintenance:
		err = p.unsetMaintenance(ctx, h, n.UUID)
		res.Message = "Ironic maintenance off"
	}
	return res, err
}
