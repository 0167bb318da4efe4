package ironic

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// rootDevice maps the spec's root device hints to Ironic's
// properties.root_device (nil: none).
func rootDevice(r *wire.RootDeviceHints) map[string]any {
	if r == nil {
		return nil
	}
	m := map[string]any{}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("name", r.DeviceName)
	set("hctl", r.HCTL)
	set("model", r.Model)
	set("vendor", r.Vendor)
	set("serial", r.SerialNumber)
	set("wwn", r.WWN)
	set("wwn_with_extension", r.WWNWithExtension)
	set("wwn_vendor_extension", r.WWNVendorExtension)
	if r.MinSizeGigabytes > 0 {
		m["size"] = fmt.Sprintf(">= %d", r.MinSizeGigabytes)
	}
	if r.Rotational != nil {
		m["rotational"] = *r.Rotational
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// bootCaps are the boot_mode and secure_boot capabilities of a boot mode.
func bootCaps(mode string) (bootMode, secureBoot string) {
	switch mode {
	case wire.BootModeLegacy:
		return "bios", ""
	case wire.BootModeUEFISecure:
		return "uefi", "true"
	}
	return "uefi", ""
}

// capabilities rewrites Ironic's "k:v,k:v" capabilities string with the
// host's boot_mode and secure_boot, keeping every other capability.
func capabilities(cur string, mode string) string {
	bm, sb := bootCaps(mode)
	kv := map[string]string{}
	for _, p := range strings.Split(cur, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(p), ":"); ok && k != "" {
			kv[k] = v
		}
	}
	kv["boot_mode"] = bm
	delete(kv, "secure_boot")
	if sb != "" {
		kv["secure_boot"] = sb
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + ":" + kv[k]
	}
	return strings.Join(out, ",")
}

// instanceCaps is instance_info.capabilities for the host's boot mode;
// nil for "" (Ironic's default_boot_mode, uefi by default).
func instanceCaps(mode string) map[string]any {
	if mode == "" {
		return nil
	}
	bm, sb := bootCaps(mode)
	c := map[string]any{"boot_mode": bm}
	if sb != "" {
		c["secure_boot"] = sb
	}
	return c
}

// An empty bootMode or automatedCleaningMode leaves Ironic's own default
// (its configuration) in charge: nothing is written to the node, so nodes
// registered before these fields existed deploy as they did.

// specPatch is the patch bringing a node's properties.root_device,
// properties.capabilities and automated_clean to the host's spec; empty
// when the node already has them.
func specPatch(h provisioner.Host, n *nodes.Node) nodes.UpdateOpts {
	var patch nodes.UpdateOpts
	rd := rootDevice(h.RootDeviceHints)
	cur, has := n.Properties["root_device"]
	switch {
	case rd == nil && has:
		patch = append(patch, nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/properties/root_device"})
	case rd != nil && (!has || !sameJSON(cur, rd)):
		patch = append(patch, nodes.UpdateOperation{Op: nodes.AddOp, Path: "/properties/root_device", Value: rd})
	}
	curCaps, _ := n.Properties["capabilities"].(string)
	if h.BootMode != "" {
		if caps := capabilities(curCaps, h.BootMode); caps != curCaps {
			patch = append(patch, nodes.UpdateOperation{Op: nodes.AddOp, Path: "/properties/capabilities", Value: caps})
		}
	}
	if clean := autoClean(h.AutomatedCleaningMode); clean != nil && (n.AutomatedClean == nil || *n.AutomatedClean != *clean) {
		patch = append(patch, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/automated_clean", Value: *clean})
	}
	return patch
}

// autoClean is the node's automated_clean for a cleaning mode: nil for
// "" (Ironic's [conductor]automated_clean decides, true by default).
func autoClean(mode string) *bool {
	if mode == "" {
		return nil
	}
	v := mode != wire.CleaningDisabled
	return &v
}

// sameJSON compares a value read back from Ironic (JSON-decoded) with one
// built here (ints, bools, strings).
func sameJSON(a any, b map[string]any) bool {
	m, ok := a.(map[string]any)
	if !ok || len(m) != len(b) {
		return false
	}
	for k, v := range b {
		if fmt.Sprint(m[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return reflect.TypeOf(a) == reflect.TypeOf(b)
}

// syncSpec patches the node's root device hints, boot mode capabilities
// and automated_clean when they differ from the host's spec (a spec change
// after registration); nothing while Ironic is busy with the node.
func (p *Provisioner) syncSpec(ctx context.Context, h provisioner.Host, n *nodes.Node) error {
	if n.TargetProvisionState != "" {
		return nil
	}
	patch := specPatch(h, n)
	nd, err := networkDataPatch(h, n)
	if err != nil {
		return err
	}
	patch = append(patch, nd...)
	if len(patch) == 0 {
		return nil
	}
	return p.updateNode(ctx, h, n.UUID, "set root device, boot mode, automated cleaning and network data", patch)
}

// diskFormat reports whether the image is given as a disk image format
// (raw, qcow2, vdi, vmdk), which Ironic writes with its default deploy
// interface, never as a live ISO.
func diskFormat(im *wire.Image) bool {
	f := im.EffectiveFormat()
	return f != "" && f != wire.FormatLiveISO
}

// withCaps adds instance_info.capabilities when there are any.
func withCaps(ii map[string]any, caps map[string]any) map[string]any {
	if caps != nil {
		ii["capabilities"] = caps
	}
	return ii
}
