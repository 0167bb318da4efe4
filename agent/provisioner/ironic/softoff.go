package ironic

import (
	"context"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner"
)

// SoftPowerOff asks Ironic for "soft power off" (Ironic's power interface
// sends the BMC's graceful shutdown and waits up to Config.
// SoftPowerOffTimeout); InProgress until Ironic reports the node off.
func (p *Provisioner) SoftPowerOff(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	res := provisioner.Result{ProvisioningID: n.UUID, PoweredOn: poweredOn(n)}
	switch {
	case n.PowerState == "power off" && n.TargetPowerState == "":
		p.soft.Forget(n.UUID)
		res.Message = "Ironic: powered off by a soft power off"
		return res, nil
	case n.TargetPowerState != "":
		res.InProgress, res.Message = true, "Ironic: "+n.TargetPowerState+" under way"
		return res, nil
	case p.soft.Sent(n.UUID):
		p.soft.Mark(n.UUID) // still waiting for the fallback: the mark's age restarts
		res.InProgress, res.Message = true, "Ironic gave up its soft power off ("+lastError(n)+"); waiting for the agent's hard fallback"
		return res, nil
	}
	p.soft.Mark(n.UUID)
	if err := p.softPowerOff(ctx, h, n.UUID, int(p.cfg.SoftPowerOffTimeout/time.Second)); err != nil {
		p.soft.Forget(n.UUID)
		return res, err
	}
	p.log.host(h.Name, n.UUID).Info("ironic soft power off requested", "timeout", p.cfg.SoftPowerOffTimeout)
	// A host that powers off at once is reported off by this call.
	deadline := time.Now().Add(min(p.cfg.WaitTimeout, 5*time.Second))
	for delay := p.firstPoll(); time.Now().Before(deadline); delay = p.nextPoll(delay) {
		select {
		case <-ctx.Done():
			return res, nil
		case <-time.After(delay):
		}
		if n, err = p.get(ctx, n.UUID); err != nil {
			break
		}
		res.PoweredOn = poweredOn(n)
		if n.TargetPowerState == "" && n.PowerState == "power off" {
			p.soft.Forget(n.UUID)
			res.Message = "Ironic: powered off by a soft power off"
			return res, nil
		}
	}
	res.InProgress, res.Message = true, "Ironic: soft power off requested; waiting for the host to power off"
	return res, nil
}
