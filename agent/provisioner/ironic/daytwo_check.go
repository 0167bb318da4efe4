package ironic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// What a day-two clean left on the BMC, and its bounds.

// verified ends a day-two run: the firmware inventory must show every
// component at its version (when Config.FirmwarePending reads it).
func (p *Provisioner) verified(ctx context.Context, h provisioner.Host, res provisioner.Result, spec provisioner.DayTwoSpec, how string) (provisioner.Result, error) {
	msg := specParts(spec) + " " + how
	if len(spec.Firmware) > 0 {
		pending, ok := p.firmwareLeft(ctx, h, spec)
		switch {
		case !ok:
			msg += "; firmware versions not checked against the BMC's inventory (Ironic's word)"
		case len(pending) > 0:
			return res, fmt.Errorf("%w: Ironic's clean of host %s ended but the BMC's firmware inventory shows %s not at its version (the flash did not take, or the BMC flashed another component: Ironic 21.4's SimpleUpdate names no target)",
				errclass.ErrFailed, h.Name, components(pending))
		default:
			msg += "; the BMC's inventory shows every component at its version"
		}
	}
	res.Message = msg
	return res, nil
}

// firmwareLeft: the spec's components not at their version, and whether
// the inventory could be read.
func (p *Provisioner) firmwareLeft(ctx context.Context, h provisioner.Host, spec provisioner.DayTwoSpec) ([]wire.FirmwareComponent, bool) {
	if p.cfg.FirmwarePending == nil || len(spec.Firmware) == 0 {
		return nil, false
	}
	pending, err := p.cfg.FirmwarePending(ctx, h, spec.Firmware)
	if err != nil {
		p.log.host(h.Name, h.ProvisioningID).Warn("BMC firmware inventory unreadable", "err", err)
		return nil, false
	}
	return pending, true
}

func (p *Provisioner) serviceTimeout(spec provisioner.DayTwoSpec) time.Duration {
	if p.cfg.ServiceTimeout > 0 {
		return p.cfg.ServiceTimeout
	}
	d := 30 * time.Minute
	for _, c := range spec.Firmware {
		d += c.EffectiveTimeout()
	}
	return d
}

// biosCurrent is Ironic's cached BIOS settings of the node (read at
// manage and at every clean's start).
func (p *Provisioner) biosCurrent(ctx context.Context, uuid string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	all, err := nodes.ListBIOSSettings(ctx, p.client, uuid, nil).Extract()
	if err != nil {
		var e error = classify(err, "read BIOS settings of node "+uuid)
		if errors.Is(e, errclass.ErrNotFound) {
			return nil, nil
		}
		return nil, e
	}
	out := make(map[string]string, len(all))
	for _, s := range all {
		out[s.Name] = s.Value
	}
	return out, nil
}

func stepOf(n *nodes.Node) string {
	if n == nil || len(n.CleanStep) == 0 {
		return "(between steps)"
	}
	i, _ := n.CleanStep["interface"].(string)
	s, _ := n.CleanStep["step"].(string)
	return i + "." + s
}

func components(fw []wire.FirmwareComponent) string {
	s := make([]string, len(fw))
	for i, c := range fw {
		s[i] = c.Component
		if c.Version != "" {
			s[i] += " (want " + c.Version + ")"
		}
	}
	return strings.Join(s, ", ")
}

// specParts names what a spec changes, for messages.
func specParts(spec provisioner.DayTwoSpec) string {
	var p []string
	if spec.BIOS != nil {
		p = append(p, "BIOS settings")
	}
	if spec.RAID != nil && len(spec.RAID.HardwareRAIDVolumes) > 0 {
		p = append(p, "hardware RAID")
	}
	if len(spec.Firmware) > 0 {
		p = append(p, "firmware")
	}
	return strings.Join(p, ", ")
}
