package ironic

import (
	"context"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/drivers"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
)

// Interfaces rackfence chooses for nodes with the redfish hardware type
// (see Config.RedfishInspect and Config.RedfishVirtualMedia).
const (
	redfishInspectIface = "redfish"
	vmediaBootIface     = "redfish-virtual-media"
	ramdiskDeployIface  = "ramdisk"
)

// redfishChoice is what the provisioner does for redfish nodes, decided
// once in New from the Config and what Ironic enables.
type redfishChoice struct {
	inspect string // inspect interface at creation ("" = Ironic's default)
	vmedia  bool   // Provision over virtual media with the ramdisk deploy
}

// chooseRedfish reads GET /v1/drivers/redfish (which interfaces Ironic
// enables for the redfish hardware type) when the Config leaves a choice
// to it. An Ironic that does not answer (redfish not enabled, an old
// Ironic) leaves Ironic's defaults, logged once.
func (p *Provisioner) chooseRedfish(ctx context.Context) redfishChoice {
	c := redfishChoice{}
	auto := p.cfg.RedfishInspect == "" || p.cfg.RedfishVirtualMedia == ""
	var d *drivers.Driver
	if auto {
		cctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
		var err error
		d, err = drivers.GetDriverDetails(cctx, p.client, "redfish").Extract()
		if err != nil {
			if !gophercloud.ResponseCodeIs(err, 404) {
				p.log.Warn("cannot read Ironic's redfish hardware type; using Ironic's default interfaces for redfish nodes", "err", err)
			}
			d = nil
		}
	}
	switch p.cfg.RedfishInspect {
	case "":
		if d != nil && slices.Contains(d.EnabledInspectInterfaces, redfishInspectIface) {
			c.inspect = redfishInspectIface
		}
	default:
		c.inspect = p.cfg.RedfishInspect
	}
	switch p.cfg.RedfishVirtualMedia {
	case "":
		c.vmedia = d != nil && slices.Contains(d.EnabledBootInterfaces, vmediaBootIface) &&
			slices.Contains(d.EnabledDeployInterfaces, ramdiskDeployIface)
	case "on":
		c.vmedia = true
	}
	if _, ok := p.cfg.Interfaces["inspect"]; ok {
		c.inspect = ""
	}
	if _, ok := p.cfg.Interfaces["boot"]; ok {
		c.vmedia = false
	}
	if _, ok := p.cfg.Interfaces["deploy"]; ok {
		c.vmedia = false
	}
	if p.cfg.Driver != "" && p.cfg.Driver != "redfish" {
		c = redfishChoice{}
	}
	p.log.Info("ironic redfish nodes", "inspect_interface", orDefault(c.inspect), "virtual_media_deploy", c.vmedia)
	return c
}

func orDefault(s string) string {
	if s == "" {
		return "Ironic's default"
	}
	return s
}

// usesVirtualMedia: the node deploys over virtual media (ramdisk deploy).
func usesVirtualMedia(n *nodes.Node) bool {
	return n.DeployInterface == ramdiskDeployIface && n.BootInterface == vmediaBootIface
}
