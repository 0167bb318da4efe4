package direct

import (
	"context"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// SoftPowerOff asks the OS to shut down (Redfish GracefulShutdown, IPMI
// chassis power soft) once, then reports InProgress until the BMC reads
// the host off.
func (p *Provisioner) SoftPowerOff(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	pw, err := c.Power(ctx)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	if pw == bmc.PowerOff {
		p.soft.Forget(h.Name)
		return provisioner.Result{PoweredOn: boolp(false), Message: "powered off by a graceful shutdown"}, nil
	}
	if !p.soft.Sent(h.Name) {
		if err := c.SoftPowerOff(ctx, p.guard, h.Name); err != nil {
			return provisioner.Result{}, p.done(h, err)
		}
		p.soft.Mark(h.Name)
		p.log.Info("graceful shutdown requested", "host", h.Name, "protocol", c.Protocol())
		// An OS (or BMC) that powers off at once needs no second poll.
		if pw, err = c.Power(ctx); err == nil && pw == bmc.PowerOff {
			p.soft.Forget(h.Name)
			return provisioner.Result{PoweredOn: boolp(false), Message: "powered off by a graceful shutdown"}, nil
		}
	}
	res := provisioner.Result{InProgress: true, Message: "graceful shutdown requested; waiting for the host to power off"}
	if pw == bmc.PowerOn {
		res.PoweredOn = boolp(true)
	}
	return res, nil
}
