package ironic

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// SetPower powers the host on or off through Ironic (never through the BMC
// directly: Ironic reverts power changes made behind its back). Blocks
// until Ironic reports the new power state, or returns InProgress after
// Config.WaitTimeout; Ironic's failure is ErrFailed with its last_error.
func (p *Provisioner) SetPower(ctx context.Context, h provisioner.Host, on bool) (provisioner.Result, error) {
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	want, target := "power off", nodes.PowerOff
	if on {
		want, target = "power on", nodes.PowerOn
	}
	res := provisioner.Result{ProvisioningID: n.UUID, PoweredOn: poweredOn(n)}
	p.soft.Forget(n.UUID)
	if n.PowerState == want && n.TargetPowerState == "" {
		return res, nil
	}
	if n.TargetPowerState == "" {
		if err := p.changePowerState(ctx, h, n.UUID, target); err != nil {
			return res, err
		}
	}
	deadline := time.Now().Add(p.cfg.WaitTimeout)
	delay := p.firstPoll()
	for {
		n, err = p.get(ctx, n.UUID)
		if err != nil {
			return res, err
		}
		res.PoweredOn = poweredOn(n)
		if n.TargetPowerState == "" {
			if n.PowerState == want {
				res.Message = "Ironic: " + want
				return res, nil
			}
			return res, fmt.Errorf("%w: %s host %s through Ironic (node %s is %q): %s",
				errclass.ErrFailed, want, h.Name, n.UUID, n.PowerState, lastError(n))
		}
		if time.Now().After(deadline) {
			res.InProgress = true
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("%w: %s host %s: stopped waiting: %v", errclass.ErrTransient, want, h.Name, ctx.Err())
		case <-time.After(delay):
		}
		delay = p.nextPoll(delay)
	}
}

// PowerState reads the power state Ironic last recorded (read-only).
func (p *Provisioner) PowerState(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	return provisioner.Result{ProvisioningID: n.UUID, PoweredOn: poweredOn(n)}, nil
}
