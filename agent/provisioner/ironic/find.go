package ironic

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// get reads a node by UUID or name; ErrNotFound when Ironic does not know it.
func (p *Provisioner) get(ctx context.Context, id string) (*nodes.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	n, err := nodes.Get(ctx, p.client, id).Extract()
	if err != nil {
		return nil, classify(err, "read node "+id)
	}
	return n, nil
}

// node reads the host's node: by its ProvisioningID, else by name.
func (p *Provisioner) node(ctx context.Context, h provisioner.Host) (*nodes.Node, error) {
	id := h.ProvisioningID
	if id == "" {
		id = h.Name
	}
	n, err := p.get(ctx, id)
	if err != nil && h.ProvisioningID != "" && errors.Is(err, errclass.ErrNotFound) {
		// The UUID is gone (e.g. Ironic lost its database): the caller
		// re-registers; say which UUID was missing.
		return nil, fmt.Errorf("%w: Ironic no longer knows node %s of host %s: register it again", errclass.ErrNotFound, h.ProvisioningID, h.Name)
	}
	return n, err
}

// portByMAC returns the port holding mac, or nil.
func (p *Provisioner) portByMAC(ctx context.Context, mac string) (*ports.Port, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	page, err := ports.ListDetail(p.client, ports.ListOpts{Address: strings.ToLower(mac)}).AllPages(ctx)
	if err != nil {
		return nil, classify(err, "list ports with address "+mac)
	}
	all, err := ports.ExtractPorts(page)
	if err != nil {
		return nil, classify(err, "read ports with address "+mac)
	}
	for i := range all {
		if strings.EqualFold(all[i].Address, mac) {
			return &all[i], nil
		}
	}
	return nil, nil
}

// find looks the host's node up by UUID, then name, then boot MAC. It
// returns nil (no error) when none matches. A boot MAC held by a node of
// another name is ErrMACInUse naming that node.
func (p *Provisioner) find(ctx context.Context, h provisioner.Host) (*nodes.Node, error) {
	for _, id := range []string{h.ProvisioningID, h.Name} {
		if id == "" {
			continue
		}
		n, err := p.get(ctx, id)
		if err == nil {
			return n, p.checkMAC(ctx, h, n)
		}
		if !errors.Is(err, errclass.ErrNotFound) {
			return nil, err
		}
	}
	if h.BootMACAddress == "" {
		return nil, nil
	}
	port, err := p.portByMAC(ctx, h.BootMACAddress)
	if err != nil || port == nil {
		return nil, err
	}
	n, err := p.get(ctx, port.NodeUUID)
	if err != nil {
		return nil, err
	}
	if n.Name != "" && n.Name != h.Name {
		return nil, fmt.Errorf("%w: %s of host %s is a port of node %s (%s): remove that port or fix bootMACAddress",
			ErrMACInUse, h.BootMACAddress, h.Name, n.Name, n.UUID)
	}
	return n, nil
}

// checkMAC fails when the boot MAC is a port of a node other than n.
func (p *Provisioner) checkMAC(ctx context.Context, h provisioner.Host, n *nodes.Node) error {
	if h.BootMACAddress == "" {
		return nil
	}
	port, err := p.portByMAC(ctx, h.BootMACAddress)
	if err != nil || port == nil || port.NodeUUID == n.UUID {
		return err
	}
	owner := port.NodeUUID
	if o, err := p.get(ctx, port.NodeUUID); err == nil && o.Name != "" {
		owner = o.Name + " (" + o.UUID + ")"
	}
	return fmt.Errorf("%w: %s of host %s is a port of node %s: remove that port or fix bootMACAddress",
		ErrMACInUse, h.BootMACAddress, h.Name, owner)
}
