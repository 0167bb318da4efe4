package ironic

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// failureStates are Ironic provision states a wait stops at instead of
// spinning (gophercloud's WaitForProvisionState would spin on them).
var failureStates = map[string]bool{
	string(nodes.AdoptFail):    true,
	string(nodes.DeployFail):   true,
	string(nodes.CleanFail):    true,
	string(nodes.InspectFail):  true,
	string(nodes.Error):        true,
	string(nodes.RescueFail):   true,
	string(nodes.UnrescueFail): true,
	string(nodes.ServiceFail):  true,
}

// waitFor polls the node every PollInterval until done(n), a failure state
// (or failed(n) when given), or Config.WaitTimeout. It returns the last node
// read; inProgress is true when the timeout passed first (the caller returns
// Result.InProgress and is called again). A read error (Ironic unreachable,
// node gone) is returned at once: every method re-reads the state when
// called again, so nothing is lost.
func (p *Provisioner) waitFor(ctx context.Context, h provisioner.Host, uuid, what string,
	done func(*nodes.Node) bool, failed func(*nodes.Node) bool) (n *nodes.Node, inProgress bool, err error) {
	deadline := time.Now().Add(p.cfg.WaitTimeout)
	log := p.log.host(h.Name, uuid)
	delay := p.firstPoll()
	for {
		n, err = p.get(ctx, uuid)
		if err != nil {
			return nil, false, err
		}
		if done(n) {
			return n, false, nil
		}
		if failedState(n, failed) {
			log.Warn("ironic failure state", "op", what, "provision_state", n.ProvisionState, "last_error", n.LastError)
			return n, false, fmt.Errorf("%w: %s of host %s: node %s is in %q: %s",
				ErrStateFailed, what, h.Name, uuid, n.ProvisionState, lastError(n))
		}
		if time.Now().After(deadline) {
			log.Info("ironic still busy; will look again", "op", what, "provision_state", n.ProvisionState,
				"target", n.TargetProvisionState, "waited", p.cfg.WaitTimeout)
			return n, true, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return n, false, fmt.Errorf("%w: %s of host %s: stopped waiting (node %s in %q): %v",
				errclass.ErrTransient, what, h.Name, uuid, n.ProvisionState, ctx.Err())
		case <-t.C:
		}
		delay = p.nextPoll(delay)
	}
}

// firstPoll and nextPoll space a wait's reads: 50 ms first (fast
// transitions such as adopt take ~0.2 s), doubling up to PollInterval, so
// short waits end quickly and long ones cost Ironic few reads.
func (p *Provisioner) firstPoll() time.Duration {
	return min(50*time.Millisecond, p.cfg.PollInterval)
}

func (p *Provisioner) nextPoll(d time.Duration) time.Duration {
	return min(2*d, p.cfg.PollInterval)
}

func failedState(n *nodes.Node, failed func(*nodes.Node) bool) bool {
	if failed != nil {
		return failed(n)
	}
	// Failure states are stable in Ironic's state machine (it may keep
	// target_provision_state set in them): the node is no longer moving.
	return failureStates[n.ProvisionState]
}

func lastError(n *nodes.Node) string {
	if n.LastError == "" {
		return "Ironic recorded no last_error"
	}
	return n.LastError
}

// inState returns a done func for a stable provision state.
func inState(states ...nodes.ProvisionState) func(*nodes.Node) bool {
	return func(n *nodes.Node) bool {
		if n.TargetProvisionState != "" {
			return false
		}
		for _, s := range states {
			if n.ProvisionState == string(s) {
				return true
			}
		}
		return false
	}
}

// poweredOn reads Ironic's power_state: nil when unknown.
func poweredOn(n *nodes.Node) *bool {
	var b bool
	switch n.PowerState {
	case "power on":
		b = true
	case "power off":
		b = false
	default:
		return nil
	}
	return &b
}
