package ironic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
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

// canClean checks, before anything changes, that the node's interfaces
// run the steps the spec needs and that Ironic can boot its agent
// ramdisk (named by the node or by Config).
func (p *Provisioner) canClean(h provisioner.Host, n *nodes.Node, spec provisioner.DayTwoSpec) error {
	need := map[nodes.StepInterface]string{}
	if len(spec.Firmware) > 0 {
		need[nodes.InterfaceManagement] = n.ManagementInterface
	}
	if spec.BIOS != nil {
		need[nodes.InterfaceBIOS] = n.BIOSInterface
	}
	if spec.RAID != nil && len(spec.RAID.HardwareRAIDVolumes) > 0 {
		need[nodes.InterfaceRAID] = n.RAIDInterface
	}
	for _, k := range []nodes.StepInterface{nodes.InterfaceManagement, nodes.InterfaceBIOS, nodes.InterfaceRAID} {
		if iface, ok := need[k]; ok && iface != "redfish" {
			return fmt.Errorf("%w: host %s: Ironic applies %s through the node's %s_interface redfish, and node %s has %q (enable redfish in Ironic's enabled_%s_interfaces and set the node's %s_interface)",
				provisioner.ErrUnsupported, h.Name, dayTwoPart(k), k, n.UUID, iface, k, k)
		}
	}
	if nodeRamdisk(n) || p.cfg.DeployISO != "" || (p.cfg.DeployKernel != "" && p.cfg.DeployRamdisk != "") {
		return nil
	}
	return fmt.Errorf("%w: host %s: Ironic 21.4 runs its redfish BIOS, RAID and firmware clean steps only with its agent ramdisk booted on the host (each step requires it), and neither node %s nor this agent names one: set the agent's --ironic-deploy-kernel and --ironic-deploy-ramdisk (or the node's driver_info deploy_kernel/deploy_ramdisk), or remove the change",
		ErrNeedsAgentRamdisk, h.Name, n.UUID)
}

func dayTwoPart(k nodes.StepInterface) string {
	switch k {
	case nodes.InterfaceBIOS:
		return "BIOS settings"
	case nodes.InterfaceRAID:
		return "hardware RAID"
	}
	return "firmware updates"
}

func nodeRamdisk(n *nodes.Node) bool {
	has := func(k string) bool { v, _ := n.DriverInfo[k].(string); return v != "" }
	return has("deploy_iso") || (has("deploy_kernel") && has("deploy_ramdisk"))
}

// setRamdisk writes Config's agent ramdisk into driver_info when the
// node names none.
func (p *Provisioner) setRamdisk(ctx context.Context, h provisioner.Host, n *nodes.Node) error {
	if nodeRamdisk(n) {
		return nil
	}
	patch := nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info/deploy_iso", Value: p.cfg.DeployISO}}
	if p.cfg.DeployISO == "" {
		patch = nodes.UpdateOpts{
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info/deploy_kernel", Value: p.cfg.DeployKernel},
			nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info/deploy_ramdisk", Value: p.cfg.DeployRamdisk}}
	}
	return p.updateNode(ctx, h, n.UUID, "set the agent ramdisk in driver_info", patch)
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
				msg += "; the BMC's firmware inventory already shows every component at its version: Ironic did not notice its task end (a sushy without standard message registries cannot read task monitors)"
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
				provisioner.ErrFailed, h.Name, components(pending))
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
		if errors.Is(e, provisioner.ErrNotFound) {
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
