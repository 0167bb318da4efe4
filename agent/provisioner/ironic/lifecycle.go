package ironic

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Every method below reads the node first and acts from the state Ironic
// reports, so calling it again after InProgress, a transient error or an
// agent restart picks up where Ironic is. Each blocks until the target
// state, a failure state (an ErrStateFailed error with Ironic's last_error)
// or Config.WaitTimeout (Result.InProgress), always bounded by ctx.

// Provide moves a manageable node to available (Ironic: provide, then
// cleaning when automated cleaning is on).
func (p *Provisioner) Provide(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.transition(ctx, h, "provide", nodes.TargetProvide,
		[]nodes.ProvisionState{nodes.Manageable, nodes.CleanFail},
		[]nodes.ProvisionState{nodes.Available})
}

// Provision writes h.Image into instance_info and deploys: available →
// deploying → active. A redfish node deploys over virtual media when
// Config.RedfishVirtualMedia says so: boot_interface redfish-virtual-media,
// deploy_interface ramdisk, instance_info.boot_iso = the image URL (Ironic
// powers off, inserts the ISO into the BMC's virtual CD, sets the boot
// device to CD and powers on; the node is active without any callback).
func (p *Provisioner) Provision(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	if h.Image == nil || h.Image.URL == "" {
		return provisioner.Result{}, fmt.Errorf("%w: host %s has no image.url to provision", errclass.ErrFailed, h.Name)
	}
	if h.BootMethod == wire.BootMethodUEFIHTTP {
		return provisioner.Result{}, fmt.Errorf("%w: host %s: bootMethod uefihttp: Ironic 21.4 (Zed) has no UEFI HTTP boot interface for the redfish hardware type (redfish-https came in a later release): use bootMethod vmedia or pxe, or the direct provisioner (rackfence-agent --provisioner direct)",
			errclass.ErrUnsupported, h.Name)
	}
	// bootMethod pxe keeps the node's own boot interface (pxe or ipxe, as
	// Ironic is configured); vmedia asks for redfish-virtual-media.
	vmedia := (p.redfish.vmedia || h.BootMethod == wire.BootMethodVirtualMedia) && h.BootMethod != wire.BootMethodPXE
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	switch n.ProvisionState {
	case string(nodes.Available), string(nodes.DeployFail):
		if err := p.syncSpec(ctx, h, n); err != nil {
			return provisioner.Result{ProvisioningID: n.UUID}, err
		}
		switch {
		case diskFormat(h.Image) && n.DeployInterface == ramdiskDeployIface:
			// A disk image is written by Ironic's default deploy
			// interface, not booted as an ISO.
			if err := p.updateNode(ctx, h, n.UUID, "reset boot and deploy interfaces", nodes.UpdateOpts{
				nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/boot_interface"},
				nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/deploy_interface"},
			}); err != nil {
				return provisioner.Result{ProvisioningID: n.UUID}, err
			}
			if n, err = p.get(ctx, n.UUID); err != nil {
				return provisioner.Result{}, err
			}
		case h.Image.EffectiveFormat() == wire.FormatLiveISO && n.DeployInterface != ramdiskDeployIface &&
			!(n.Driver == "redfish" && vmedia):
			// A live ISO boots with the ramdisk deploy interface and boot_iso.
			if err := p.updateNode(ctx, h, n.UUID, "set deploy interface", nodes.UpdateOpts{
				nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/deploy_interface", Value: ramdiskDeployIface},
			}); err != nil {
				return provisioner.Result{ProvisioningID: n.UUID}, err
			}
			n.DeployInterface = ramdiskDeployIface
		}
		if n.Driver == "redfish" && vmedia && !usesVirtualMedia(n) && !diskFormat(h.Image) {
			if err := p.updateNode(ctx, h, n.UUID, "set boot and deploy interfaces", nodes.UpdateOpts{
				nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/boot_interface", Value: vmediaBootIface},
				nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/deploy_interface", Value: ramdiskDeployIface},
			}); err != nil {
				return provisioner.Result{ProvisioningID: n.UUID}, err
			}
			n.BootInterface, n.DeployInterface = vmediaBootIface, ramdiskDeployIface
		}
		if err := p.updateNode(ctx, h, n.UUID, "set instance_info", p.instanceInfo(h, n)); err != nil {
			return provisioner.Result{ProvisioningID: n.UUID}, err
		}
	}
	return p.transitionFrom(ctx, h, n, "deploy", nodes.TargetActive,
		[]nodes.ProvisionState{nodes.Available, nodes.DeployFail},
		[]nodes.ProvisionState{nodes.Active})
}

// Deprovision undeploys: active → deleting → cleaning → available.
//
// A virtual media deploy that failed because Ironic found no usable
// virtual media (its Redfish client looks under the system's managers
// only) cannot be torn down by the same interfaces either: the tear down
// ejects through the same lookup and the node lands in "error". So a node
// in "deploy failed" or "error" whose last_error is about virtual media
// gets Ironic's default boot and deploy interfaces back first
// (maintenance on, interfaces reset, maintenance off: Ironic changes
// interfaces outside enroll/manageable/available only in maintenance);
// the undeploy then powers it off and makes it available.
func (p *Provisioner) Deprovision(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	if usesVirtualMedia(n) && vmediaFailure(n) {
		if err := p.resetDeployInterfaces(ctx, h, n); err != nil {
			return provisioner.Result{ProvisioningID: n.UUID}, err
		}
		if n, err = p.node(ctx, h); err != nil {
			return provisioner.Result{}, err
		}
	}
	return p.transitionFrom(ctx, h, n, "undeploy", nodes.TargetDeleted,
		[]nodes.ProvisionState{nodes.Active, nodes.DeployFail, nodes.Error},
		[]nodes.ProvisionState{nodes.Available})
}

// vmediaFailure: the node failed (deploy failed, error) on virtual media.
func vmediaFailure(n *nodes.Node) bool {
	if n.ProvisionState != string(nodes.DeployFail) && n.ProvisionState != string(nodes.Error) {
		return false
	}
	e := strings.ToLower(n.LastError)
	return strings.Contains(e, "virtualmedia") || strings.Contains(e, "virtual media")
}

// resetDeployInterfaces gives the node Ironic's default boot and deploy
// interfaces back, in maintenance (see Deprovision).
func (p *Provisioner) resetDeployInterfaces(ctx context.Context, h provisioner.Host, n *nodes.Node) error {
	if !n.Maintenance {
		if err := p.setMaintenance(ctx, h, n.UUID, reasonVMediaReset); err != nil {
			return err
		}
	}
	err := p.updateNode(ctx, h, n.UUID, "reset boot and deploy interfaces", nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/boot_interface"},
		nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/deploy_interface"},
	})
	if !n.Maintenance {
		if err2 := p.unsetMaintenance(ctx, h, n.UUID); err == nil {
			err = err2
		}
	}
	if err == nil {
		p.log.host(h.Name, n.UUID).Warn("virtual media deploy failed; undeploying with Ironic's default boot and deploy interfaces",
			"provision_state", n.ProvisionState, "last_error", n.LastError)
	}
	return err
}

// Adopt takes over a running host with no power change: manageable →
// adopting → active. "adopt failed" is an ErrStateFailed error with Ironic's
// last_error; calling Adopt again retries the adoption (the agent backs
// off). An unknown node is ErrNotFound: register again, then adopt.
func (p *Provisioner) Adopt(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	if h.Image != nil && h.Image.URL != "" && n.ProvisionState == string(nodes.Manageable) {
		if err := p.updateNode(ctx, h, n.UUID, "set instance_info", p.instanceInfo(h, n)); err != nil {
			return provisioner.Result{ProvisioningID: n.UUID}, err
		}
	}
	return p.transitionFrom(ctx, h, n, "adopt", nodes.TargetAdopt,
		[]nodes.ProvisionState{nodes.Manageable, nodes.AdoptFail},
		[]nodes.ProvisionState{nodes.Active})
}

// transition reads the node, then runs transitionFrom.
func (p *Provisioner) transition(ctx context.Context, h provisioner.Host, what string, target nodes.TargetProvisionState,
	from, to []nodes.ProvisionState) (provisioner.Result, error) {
	n, err := p.node(ctx, h)
	if err != nil {
		return provisioner.Result{}, err
	}
	return p.transitionFrom(ctx, h, n, what, target, from, to)
}

// transitionFrom: already in a to state → done; in a from state → request
// target and wait; in a transitional state → wait; else ErrWrongState.
func (p *Provisioner) transitionFrom(ctx context.Context, h provisioner.Host, n *nodes.Node, what string,
	target nodes.TargetProvisionState, from, to []nodes.ProvisionState) (provisioner.Result, error) {
	res := provisioner.Result{ProvisioningID: n.UUID}
	done := inState(to...)
	switch {
	case done(n):
		res.PoweredOn = poweredOn(n)
		return res, nil
	case hasState(from, n.ProvisionState) && (n.TargetProvisionState == "" || failureStates[n.ProvisionState]):
		if err := p.changeProvisionState(ctx, h, n.UUID, target); err != nil {
			return res, err
		}
		p.log.host(h.Name, n.UUID).Info("ironic "+what+" requested", "from", n.ProvisionState)
	case n.TargetProvisionState != "" && !failureStates[n.ProvisionState]:
		// Ironic is busy with a transition: wait for where it lands.
	default:
		return res, fmt.Errorf("%w: cannot %s host %s: node %s is %q (%s needs one of %s)",
			ErrWrongState, what, h.Name, n.UUID, n.ProvisionState, what, joinStates(from))
	}
	n2, inProgress, err := p.waitFor(ctx, h, n.UUID, what, done, nil)
	if n2 != nil {
		res.PoweredOn = poweredOn(n2)
	}
	res.InProgress = inProgress
	if err == nil && !inProgress {
		res.Message = fmt.Sprintf("Ironic %s: node %s is %s", what, n.UUID, n2.ProvisionState)
	}
	return res, err
}

func hasState(states []nodes.ProvisionState, s string) bool {
	for _, x := range states {
		if string(x) == s {
			return true
		}
	}
	return false
}

func joinStates(states []nodes.ProvisionState) string {
	s := make([]string, len(states))
	for i, x := range states {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}

// instanceInfo is the patch writing the host's image into instance_info:
// boot_iso for a node deploying over virtual media (ramdisk deploy: Ironic
// refuses image_source and boot_iso together), with
// ramdisk_image_download_source Config.RedfishISODownload ("http": the BMC
// reads the URL itself, Ironic neither downloads it nor needs an HTTP
// server of its own); image_source otherwise.
func (p *Provisioner) instanceInfo(h provisioner.Host, n *nodes.Node) nodes.UpdateOpts {
	caps := instanceCaps(h.BootMode)
	if usesVirtualMedia(n) {
		return nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info", Value: withCaps(map[string]any{
			"boot_iso": h.Image.URL, "ramdisk_image_download_source": p.cfg.RedfishISODownload}, caps)}}
	}
	if n.DeployInterface == ramdiskDeployIface && h.Image.EffectiveFormat() == wire.FormatLiveISO {
		return nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info", Value: withCaps(map[string]any{
			"boot_iso": h.Image.URL}, caps)}}
	}
	ii := withCaps(map[string]any{"image_source": h.Image.URL}, caps)
	if cu := h.Image.ChecksumURL(); cu != "" {
		// A checksum file's URL goes to Ironic as it is (as metal3 passes
		// it): the agent fetches the file and takes the image's line.
		switch t := h.Image.ChecksumType; t {
		case "", wire.ChecksumAuto, wire.ChecksumMD5:
			ii["image_checksum"] = cu
		default:
			ii["image_os_hash_algo"] = t
			ii["image_os_hash_value"] = cu
		}
	} else if algo, sum := h.Image.ChecksumAlgo(); algo != "" {
		if algo == wire.ChecksumMD5 {
			ii["image_checksum"] = sum
		} else {
			ii["image_os_hash_algo"] = algo
			ii["image_os_hash_value"] = sum
		}
	}
	if f := h.Image.EffectiveFormat(); f != "" && f != wire.FormatLiveISO {
		ii["image_disk_format"] = f
	}
	return nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info", Value: ii}}
}
