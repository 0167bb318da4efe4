package ironic

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/provisioner"
)

// Day two through Ironic 21.4: BIOS settings, hardware RAID and firmware
// as one manual clean of the node (available → manage → clean with
// steps → provide). The clean rackfence started is recorded in
// node.extra (markKey), so a later call — after InProgress, an agent
// restart or a lease moving to another agent — follows that clean to its
// end instead of starting another.

// markKey is the node.extra key of rackfence's day-two record.
const markKey = "rackfence_day_two"

// Record states.
const (
	markRunning = "cleaning"
	markDone    = "done"
	markFailed  = "failed"
)

type dayTwoMark struct {
	Fingerprint string
	State       string
	Started     time.Time
}

func readMark(n *nodes.Node) dayTwoMark {
	m, _ := n.Extra[markKey].(map[string]any)
	var d dayTwoMark
	d.Fingerprint, _ = m["fingerprint"].(string)
	d.State, _ = m["state"].(string)
	if s, ok := m["started"].(string); ok {
		d.Started, _ = time.Parse(time.RFC3339, s)
	}
	return d
}

func (p *Provisioner) writeMark(ctx context.Context, h provisioner.Host, uuid string, m dayTwoMark) error {
	v := map[string]any{"fingerprint": m.Fingerprint, "state": m.State, "started": m.Started.UTC().Format(time.RFC3339)}
	return p.updateNode(ctx, h, uuid, "record the day-two clean in extra/"+markKey, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/extra/" + markKey, Value: v}})
}

// Service implements provisioner.Servicer.
func (p *Provisioner) Service(ctx context.Context, h provisioner.Host, spec provisioner.DayTwoSpec) (provisioner.Result, error) {
	if spec.Empty() {
		return provisioner.Result{ProvisioningID: h.ProvisioningID, Message: "no BIOS, RAID or firmware change to apply"}, nil
	}
	if err := checkDayTwo(spec); err != nil {
		return provisioner.Result{ProvisioningID: h.ProvisioningID}, err
	}
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	res := provisioner.Result{ProvisioningID: n.UUID}
	fp := dayTwoFingerprint(spec)
	m := readMark(n)
	mine := m.Fingerprint == fp
	switch n.ProvisionState {
	case string(nodes.Active):
		return res, fmt.Errorf("%w: host %s (node %s) is provisioned: Ironic changes an active node only through service steps (API 1.87, Ironic 2023.2; this Ironic serves up to %s) and rackfence's Ironic path uses manual cleaning only. Deprovision the host to apply its BIOS, RAID or firmware change, or remove the change",
			ErrServiceActive, h.Name, n.UUID, p.maxVersion)
	case string(nodes.Cleaning), string(nodes.CleanWait):
		if !mine || m.State != markRunning {
			res.InProgress, res.Message = true, fmt.Sprintf("Ironic is cleaning node %s (not rackfence's day-two clean): waiting for it to end", n.UUID)
			return res, nil
		}
		return p.followClean(ctx, h, n, m, spec)
	case string(nodes.CleanFail):
		if mine && m.State == markRunning {
			return res, p.cleanFailed(ctx, h, n, m)
		}
		// An earlier clean (automated, or a day-two one already reported)
		// failed: take the node back to manageable and start.
		if err := p.recoverCleanFail(ctx, h, n); err != nil {
			return res, err
		}
		return p.Service(ctx, h, spec)
	case string(nodes.Available):
		if mine && m.State == markDone {
			return p.verified(ctx, h, res, spec, "already applied")
		}
		if err := p.canClean(h, n, spec); err != nil {
			return res, err
		}
		r, err := p.transitionFrom(ctx, h, n, "manage (for day-two clean steps)", nodes.TargetManage,
			[]nodes.ProvisionState{nodes.Available}, []nodes.ProvisionState{nodes.Manageable})
		if err != nil || r.InProgress {
			return r, err
		}
		return p.Service(ctx, h, spec)
	case string(nodes.Manageable):
		if n.TargetProvisionState != "" {
			break
		}
		if mine && (m.State == markRunning || m.State == markDone) {
			// The clean this record names ended without failing.
			if m.State == markRunning {
				m.State = markDone
				if err := p.writeMark(ctx, h, n.UUID, m); err != nil {
					return res, err
				}
			}
			r, err := p.Provide(ctx, h)
			if err != nil || r.InProgress {
				return r, err
			}
			return p.verified(ctx, h, res, spec, "applied through Ironic's clean steps")
		}
		if err := p.canClean(h, n, spec); err != nil {
			return res, err
		}
		return p.startClean(ctx, h, n, spec, fp)
	}
	if n.TargetProvisionState != "" {
		res.InProgress, res.Message = true, fmt.Sprintf("node %s is %s → %s: waiting", n.UUID, n.ProvisionState, n.TargetProvisionState)
		return res, nil
	}
	return res, fmt.Errorf("%w: cannot apply BIOS, RAID or firmware to host %s: node %s is %q (needs available or manageable)",
		ErrWrongState, h.Name, n.UUID, n.ProvisionState)
}

// startClean builds the steps from the spec and what Ironic and the BMC
// show, checks the node can run them, records the clean and starts it.
func (p *Provisioner) startClean(ctx context.Context, h provisioner.Host, n *nodes.Node, spec provisioner.DayTwoSpec, fp string) (provisioner.Result, error) {
	res := provisioner.Result{ProvisioningID: n.UUID}
	fw := spec.Firmware
	if p.cfg.FirmwarePending != nil && len(fw) > 0 {
		pending, err := p.cfg.FirmwarePending(ctx, h, fw)
		if err != nil {
			return res, err
		}
		fw = pending
	}
	var bios []map[string]any
	if spec.BIOS != nil {
		cur, err := p.biosCurrent(ctx, n.UUID)
		if err != nil {
			return res, err
		}
		vendor, _ := n.Properties["vendor"].(string)
		if bios, err = biosSettings(spec.BIOS, vendor, cur, p.cfg.NamedBIOS); err != nil {
			return res, err
		}
	}
	steps := cleanSteps(firmwareImages(fw), bios, spec.RAID)
	m := dayTwoMark{Fingerprint: fp, State: markRunning, Started: time.Now()}
	if len(steps) == 0 {
		m.State = markDone
		if err := p.writeMark(ctx, h, n.UUID, m); err != nil {
			return res, err
		}
		return p.Service(ctx, h, spec)
	}
	if err := p.setRamdisk(ctx, h, n); err != nil {
		return res, err
	}
	if d := logicalDisks(spec.RAID); len(d) > 0 {
		if err := p.setRAIDConfig(ctx, h, n.UUID, d); err != nil {
			return res, err
		}
	}
	if n.Maintenance && n.Fault == "clean failure" {
		// Ironic sets maintenance on a failed clean; a retry clears it
		// (an operator's maintenance has no such fault and stays).
		if err := p.unsetMaintenance(ctx, h, n.UUID); err != nil {
			return res, err
		}
	}
	if err := p.writeMark(ctx, h, n.UUID, m); err != nil {
		return res, err
	}
	if err := p.cleanNode(ctx, h, n.UUID, steps); err != nil {
		return res, err
	}
	p.log.host(h.Name, n.UUID).Info("ironic day-two clean started", "steps", stepNames(steps))
	n2, err := p.get(ctx, n.UUID)
	if err != nil {
		return res, err
	}
	return p.followClean(ctx, h, n2, m, spec)
}

// followClean waits (bounded by WaitTimeout) for rackfence's clean to end,
// and reports it failed past ServiceTimeout.
func (p *Provisioner) followClean(ctx context.Context, h provisioner.Host, n *nodes.Node, m dayTwoMark, spec provisioner.DayTwoSpec) (provisioner.Result, error) {
	res := provisioner.Result{ProvisioningID: n.UUID}
	limit := p.serviceTimeout(spec)
	if !m.Started.IsZero() && time.Since(m.Started) > limit {
		msg := fmt.Sprintf("node %s is still %q in step %s %s after it started (timeout %s)",
			n.UUID, n.ProvisionState, stepOf(n), time.Since(m.Started).Round(time.Second), limit)
		if pending, ok := p.firmwareLeft(ctx, h, spec); ok {
			if len(pending) == 0 {
				msg += "; the BMC's firmware inventory already shows every component at its version: Ironic did not notice its task end (its check of the task fails before reading it when its sushy has no standard_registries/, as Debian's python3-sushy 4.3.3: on the conductor's host run mkdir -p /usr/lib/python3/dist-packages/sushy/standard_registries; docs/operator.md, \"Day two through Ironic\")"
			} else {
				msg += "; the BMC's firmware inventory still shows " + components(pending) + " not at its version"
			}
		}
		return res, fmt.Errorf("%w: %s of host %s: %s. Ironic keeps the node (no power change from rackfence); once Ironic ends the clean (clean failed, or manageable), resume the host", ErrServiceTimeout, "day-two clean", h.Name, msg)
	}
	n2, inProgress, err := p.waitFor(ctx, h, n.UUID, "day-two clean", inState(nodes.Manageable), nil)
	if err != nil {
		if n2 != nil && n2.ProvisionState == string(nodes.CleanFail) {
			return res, p.cleanFailed(ctx, h, n2, m)
		}
		return res, err
	}
	if inProgress {
		res.InProgress = true
		res.Message = fmt.Sprintf("Ironic runs day-two clean step %s on node %s (%s)", stepOf(n2), n2.UUID, n2.ProvisionState)
		return res, nil
	}
	return p.Service(ctx, h, spec)
}

// cleanFailed takes a node whose day-two clean failed back to manageable
// (out of Ironic's clean-failure maintenance), records the failure, and
// returns Ironic's last_error; the next call (the operator's resume)
// starts the clean again.
func (p *Provisioner) cleanFailed(ctx context.Context, h provisioner.Host, n *nodes.Node, m dayTwoMark) error {
	le := lastError(n)
	if err := p.recoverCleanFail(ctx, h, n); err != nil {
		return err
	}
	m.State = markFailed
	if err := p.writeMark(ctx, h, n.UUID, m); err != nil {
		return err
	}
	return fmt.Errorf("%w: day-two clean of host %s failed in Ironic (node %s back in manageable): %s",
		ErrStateFailed, h.Name, n.UUID, le)
}

func (p *Provisioner) recoverCleanFail(ctx context.Context, h provisioner.Host, n *nodes.Node) error {
	if _, err := p.transitionFrom(ctx, h, n, "manage (after a failed clean)", nodes.TargetManage,
		[]nodes.ProvisionState{nodes.CleanFail}, []nodes.ProvisionState{nodes.Manageable}); err != nil {
		return err
	}
	if n.Maintenance && n.Fault == "clean failure" {
		return p.unsetMaintenance(ctx, h, n.UUID)
	}
	return nil
}
