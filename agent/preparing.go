package agent

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Preparing: the build-raid, apply-bios and verify-bios actions on the
// direct path (the direct provisioner's BMC session). Each call does one
// step and returns; the state machine calls again after its poll
// interval while one is InProgress.

// dayTwo is the host's BMC session for day-two work, or ErrUnsupported
// naming what was asked of a provisioner that has none.
func (s *session) dayTwo(ctx context.Context, ph provisioner.Host, what string) (bmc.DayTwo, error) {
	src, ok := s.a.cfg.Provisioner.(dayTwoSource)
	if !ok {
		return nil, fmt.Errorf("%w: the %s provisioner does not do %s (use --provisioner direct, or remove it from the spec)",
			errclass.ErrUnsupported, s.a.cfg.Provisioner.Name(), what)
	}
	return src.DayTwo(ctx, ph)
}

// biosDesired is spec.bios as registry attributes: the named switches
// mapped to this BMC vendor's attributes, then settings (which win).
func biosDesired(ctx context.Context, d bmc.DayTwo, b *wire.BIOSSpec) (map[string]string, error) {
	named := map[string]bool{}
	for k, v := range map[string]*bool{bmc.SettingSMT: b.SimultaneousMultithreadingEnabled,
		bmc.SettingSRIOV: b.SRIOVEnabled, bmc.SettingVirtualization: b.VirtualizationEnabled} {
		if v != nil {
			named[k] = *v
		}
	}
	out := map[string]string{}
	if len(named) > 0 {
		m, err := d.BIOSNames(ctx, named)
		if err != nil {
			return nil, fmt.Errorf("bios: %w", err)
		}
		for k, v := range m {
			out[k] = v
		}
	}
	for k, v := range b.Settings {
		out[k] = v
	}
	return out, nil
}

// applyBIOS is ActionApplyBIOS.
func (s *session) applyBIOS(ctx context.Context, h wire.Host, ph provisioner.Host) (provisioner.Result, error) {
	if h.BIOS == nil {
		return provisioner.Result{Message: "no spec.bios"}, nil
	}
	if sv, ok := s.a.cfg.Provisioner.(provisioner.Servicer); ok {
		// The back end applies, resets and checks (Ironic: a manual
		// clean); no reset is left to the state machine.
		return sv.Service(ctx, ph, provisioner.DayTwoSpec{BIOS: h.BIOS})
	}
	d, err := s.dayTwo(ctx, ph, "BIOS settings (spec.bios)")
	if err != nil {
		return provisioner.Result{}, err
	}
	desired, err := biosDesired(ctx, d, h.BIOS)
	if err != nil {
		return provisioner.Result{}, err
	}
	ap, err := d.ApplyBIOS(ctx, s.a.cfg.Guard, h.Name, desired)
	if err != nil {
		return provisioner.Result{}, fmt.Errorf("bios: %w", err)
	}
	s.log.Info("BIOS settings applied", "host", h.Name, "changed", len(ap.Changed), "unchanged", len(ap.Unchanged), "applyTime", ap.ApplyTime)
	if len(ap.Changed) == 0 {
		return provisioner.Result{Message: "BIOS already holds " + strings.Join(ap.Unchanged, ", ") + " as asked: no reset needed"}, nil
	}
	changed := make([]string, 0, len(ap.Changed))
	for k := range ap.Changed {
		changed = append(changed, k)
	}
	sort.Strings(changed)
	msg := fmt.Sprintf("BIOS settings %s written to %s; they take at the next reset (a power-off and power-on follow)", strings.Join(changed, ", "), ap.SettingsObject)
	return provisioner.Result{Message: msg, ResetNeeded: ap.ResetNeeded}, nil
}

// verifyBIOS is ActionVerifyBIOS: ErrFailed naming each setting that did
// not take, with the BMC's message.
func (s *session) verifyBIOS(ctx context.Context, h wire.Host, ph provisioner.Host) (provisioner.Result, error) {
	if h.BIOS == nil {
		return provisioner.Result{Message: "no spec.bios"}, nil
	}
	if sv, ok := s.a.cfg.Provisioner.(provisioner.Servicer); ok {
		return sv.Service(ctx, ph, provisioner.DayTwoSpec{BIOS: h.BIOS}) // at spec: done at once
	}
	d, err := s.dayTwo(ctx, ph, "BIOS settings (spec.bios)")
	if err != nil {
		return provisioner.Result{}, err
	}
	desired, err := biosDesired(ctx, d, h.BIOS)
	if err != nil {
		return provisioner.Result{}, err
	}
	res, err := d.BIOSResult(ctx, desired)
	var out provisioner.Result
	if res != nil {
		out.DayTwo = &wire.DayTwoStatus{BIOS: biosStatus(desired, res, time.Now())}
	}
	if err != nil {
		return out, fmt.Errorf("bios: %w", err)
	}
	out.Message = "BIOS settings took: " + strings.Join(res.Took, ", ")
	if len(res.Unverifiable) > 0 {
		out.Message += "; sent but not readable (passwords): " + strings.Join(res.Unverifiable, ", ")
	}
	return out, nil
}

// biosStatus is status.dayTwo.bios after a read-back: the current value
// of each desired attribute, when the BMC last applied settings, and what
// did not take with the BMC's word.
func biosStatus(desired map[string]string, res *bmc.BIOSResult, now time.Time) *wire.BIOSStatus {
	b := &wire.BIOSStatus{Settings: map[string]string{}, LastApplied: now.UTC()}
	if t, err := time.Parse(time.RFC3339, res.AppliedAt); err == nil {
		b.LastApplied = t.UTC()
	}
	for _, k := range res.Took {
		b.Settings[k] = desired[k]
	}
	for _, n := range res.NotTaken {
		b.Settings[n.Attribute] = n.Have
		msg := n.Message
		if msg == "" && n.Pending {
			msg = "still pending in the BIOS settings object"
		}
		b.NotApplied = append(b.NotApplied, wire.BIOSSettingError{Name: n.Attribute, Value: n.Want, Message: msg})
	}
	return b
}

// raidTypes maps metal3's levels to Redfish RAIDType.
var raidTypes = map[string]string{"0": "RAID0", "1": "RAID1", "5": "RAID5", "6": "RAID6", "1+0": "RAID10", "5+0": "RAID50", "6+0": "RAID60"}

// minDrives is the fewest drives a level is built of.
var minDrives = map[string]int{"RAID0": 1, "RAID1": 2, "RAID5": 3, "RAID6": 4, "RAID10": 4, "RAID50": 6, "RAID60": 8}

const gib = int64(1) << 30

// buildRAID is ActionBuildRAID: one step per call — follow the storage
// job recorded on the host (whoever started it: never started again),
// delete a volume spec.raid does not keep, create the next volume it asks
// for; success once every volume is there.
func (s *session) buildRAID(ctx context.Context, h wire.Host, ph provisioner.Host) (provisioner.Result, error) {
	r := h.RAID
	wanted := r != nil && (len(r.HardwareRAIDVolumes) > 0 || len(r.SoftwareRAIDVolumes) > 0)
	recorded := s.tasks.current(h.Name, h.Task)
	if !wanted && recorded == nil {
		return provisioner.Result{Message: "no spec.raid"}, nil
	}
	if sv, ok := s.a.cfg.Provisioner.(provisioner.Servicer); ok && wanted {
		return sv.Service(ctx, ph, provisioner.DayTwoSpec{RAID: r})
	}
	if wanted && len(r.SoftwareRAIDVolumes) > 0 {
		return provisioner.Result{}, fmt.Errorf("%w: raid.softwareRAIDVolumes: software RAID is built by Ironic's ramdisk agent; the direct provisioner builds hardware volumes only (use --provisioner ironic, or raid.hardwareRAIDVolumes)", errclass.ErrUnsupported)
	}
	d, err := s.dayTwo(ctx, ph, "RAID (spec.raid)")
	if err != nil {
		return provisioner.Result{}, err
	}
	rec, ok := s.a.cfg.Client.(taskRecorder)
	if !ok {
		return provisioner.Result{}, fmt.Errorf("%w: this agent's coordinator client cannot record BMC tasks", errclass.ErrUnsupported)
	}
	if t := recorded; t != nil {
		if t.Kind != wire.BMCTaskRAID {
			return otherTask(*t), nil
		}
		method, target := jobParts(t.Component)
		res, done, err := s.followTask(ctx, rec, d, h, *t, storageJobJudge(d, *t, fmt.Sprintf("RAID job %s of %s", method, short(target))))
		if err != nil || !done {
			return res, err
		}
		if !wanted {
			return provisioner.Result{Message: "the RAID job recorded on the host ended; no spec.raid"}, nil
		}
	}
	ctrls, err := d.Storage(ctx)
	if err != nil {
		return provisioner.Result{}, err
	}
	match := matchVolumes(ctrls, r.HardwareRAIDVolumes)
	if !r.KeepExisting {
		for _, sc := range ctrls {
			for _, v := range sc.Volumes {
				if slices.Contains(match, v.URI) {
					continue
				}
				op, err := d.DeleteVolume(ctx, s.a.cfg.Guard, h.Name, v.URI)
				if err != nil {
					return provisioner.Result{}, fmt.Errorf("raid: delete volume %s of %s (raid.keepExisting is false): %w", v.ID, sc.ID, err)
				}
				if err := s.recordStorageJob(ctx, rec, h, wire.BMCTaskRAID, op); err != nil {
					return provisioner.Result{}, err
				}
				return provisioner.Result{InProgress: true, Message: fmt.Sprintf("deleted volume %s (%s) of %s: raid.keepExisting is false", v.ID, v.RAIDType, sc.ID)}, nil
			}
		}
	}
	for i, v := range r.HardwareRAIDVolumes {
		if match[i] != "" {
			continue
		}
		req, err := volumeRequest(ctrls, v, i)
		if err != nil {
			return provisioner.Result{}, err
		}
		op, err := d.CreateVolume(ctx, s.a.cfg.Guard, h.Name, req)
		if err != nil {
			return provisioner.Result{}, fmt.Errorf("raid.hardwareRAIDVolumes[%d]: %w", i, err)
		}
		if op.ApplyTime == "OnReset" {
			return provisioner.Result{}, fmt.Errorf("%w: raid.hardwareRAIDVolumes[%d]: storage %s builds volumes only at the next reset (OperationApplyTime OnReset), which the direct path does not drive yet", errclass.ErrUnsupported, i, req.Storage)
		}
		if err := s.recordStorageJob(ctx, rec, h, wire.BMCTaskRAID, op); err != nil {
			return provisioner.Result{}, err
		}
		return provisioner.Result{InProgress: true, Message: fmt.Sprintf("creating %s volume %q on %s from %s", req.RAIDType, req.Name, req.Storage, strings.Join(req.Drives, ", "))}, nil
	}
	var got []string
	vols := []wire.HardwareRAIDVolume{}
	for _, sc := range ctrls {
		for _, v := range sc.Volumes {
			if slices.Contains(match, v.URI) {
				got = append(got, fmt.Sprintf("%s %s (%s, %d GiB)", sc.ID, v.Name, v.RAIDType, v.CapacityBytes/gib))
			}
			vols = append(vols, volumeStatus(sc, v))
		}
	}
	return provisioner.Result{Message: "RAID volumes built: " + strings.Join(got, "; "),
		DayTwo: &wire.DayTwoStatus{HardwareRAIDVolumes: vols}}, nil
}

// recordStorageJob records a storage job the BMC runs on (a task, or
// work it goes on with behind a 202 that named none); one it did at once
// needs no record.
func (s *session) recordStorageJob(ctx context.Context, rec taskRecorder, h wire.Host, kind string, op *bmc.StorageOp) error {
	if op == nil || (op.Done && op.Task == "") {
		return nil
	}
	uri := jobTaskURI(op)
	if _, err := s.recordTask(ctx, rec, h, wire.BMCTaskRequest{Kind: kind, TaskURI: uri, Component: jobComponent(op)}); err != nil {
		return err
	}
	s.log.Info("storage job started and recorded", "host", h.Name, "kind", kind, "method", op.Method, "target", op.Target, "task", uri)
	return nil
}

// volumeStatus is one volume as status.dayTwo shows it (metal3's shape).
func volumeStatus(sc bmc.StorageController, v bmc.Volume) wire.HardwareRAIDVolume {
	out := wire.HardwareRAIDVolume{Name: v.Name, Level: v.RAIDType, Controller: sc.ID}
	for lvl, rt := range raidTypes {
		if rt == v.RAIDType {
			out.Level = lvl
		}
	}
	if v.CapacityBytes > 0 {
		n := int(v.CapacityBytes / gib)
		out.SizeGibibytes = &n
	}
	for _, du := range v.Drives {
		id := du
		for _, d := range sc.Drives {
			if d.URI == du {
				id = d.ID
			}
		}
		out.PhysicalDisks = append(out.PhysicalDisks, id)
	}
	return out
}

// matchVolumes pairs each wanted volume with an existing one of the same
// level (and name, controller, size and drives where given); "" when
// none. An existing volume serves at most one.
func matchVolumes(ctrls []bmc.StorageController, want []wire.HardwareRAIDVolume) []string {
	out := make([]string, len(want))
	used := map[string]bool{}
	for i, w := range want {
		for _, sc := range ctrls {
			if w.Controller != "" && w.Controller != sc.ID && w.Controller != sc.Name {
				continue
			}
			for _, v := range sc.Volumes {
				if used[v.URI] || v.RAIDType != raidTypes[w.Level] || (w.Name != "" && v.Name != w.Name) {
					continue
				}
				if w.SizeGibibytes != nil && *w.SizeGibibytes > 0 && v.CapacityBytes/gib != int64(*w.SizeGibibytes) {
					continue
				}
				if n := w.NumberOfPhysicalDisks; n != nil && len(v.Drives) != *n {
					continue
				}
				if len(w.PhysicalDisks) > 0 && !sameDrives(sc, v.Drives, w.PhysicalDisks) {
					continue
				}
				out[i], used[v.URI] = v.URI, true
				break
			}
			if out[i] != "" {
				break
			}
		}
	}
	return out
}

func sameDrives(sc bmc.StorageController, have, want []string) bool {
	if len(have) != len(want) {
		return false
	}
	for _, w := range want {
		found := false
		for _, d := range sc.Drives {
			if (d.ID == w || d.Name == w || d.URI == w) && slices.Contains(have, d.URI) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// volumeRequest is the create of wanted volume i: its controller (named,
// or the system's only one that builds its level), its drives (named, or
// the first free ones of the controller, as many as asked or the level's
// fewest), its size.
func volumeRequest(ctrls []bmc.StorageController, w wire.HardwareRAIDVolume, i int) (bmc.VolumeRequest, error) {
	at := fmt.Sprintf("raid.hardwareRAIDVolumes[%d]", i)
	rt, ok := raidTypes[w.Level]
	if !ok {
		return bmc.VolumeRequest{}, fmt.Errorf("%w: %s.level %q: Redfish has no RAID type for it (use 0, 1, 5, 6, 1+0, 5+0 or 6+0)", errclass.ErrFailed, at, w.Level)
	}
	var cands []*bmc.StorageController
	var builds []string
	for j := range ctrls {
		sc := &ctrls[j]
		if w.Controller != "" && w.Controller != sc.ID && w.Controller != sc.Name {
			continue
		}
		if len(sc.RAIDTypes) > 0 {
			builds = append(builds, fmt.Sprintf("%s (%s)", sc.ID, strings.Join(sc.RAIDTypes, ", ")))
		}
		if slices.Contains(sc.RAIDTypes, rt) {
			cands = append(cands, sc)
		}
	}
	switch {
	case len(cands) == 0 && w.Controller != "":
		return bmc.VolumeRequest{}, fmt.Errorf("%w: %s.controller %q: no storage controller of that Id builds %s (controllers that build RAID: %s)", errclass.ErrFailed, at, w.Controller, rt, orNone(builds))
	case len(cands) == 0:
		return bmc.VolumeRequest{}, fmt.Errorf("%w: %s.level %q: no storage controller of this system builds %s (controllers that build RAID: %s)", errclass.ErrFailed, at, w.Level, rt, orNone(builds))
	case len(cands) > 1:
		ids := make([]string, len(cands))
		for j, c := range cands {
			ids[j] = c.ID
		}
		return bmc.VolumeRequest{}, fmt.Errorf("%w: %s.controller: %s all build %s: name one", errclass.ErrFailed, at, strings.Join(ids, ", "), rt)
	}
	sc := cands[0]
	req := bmc.VolumeRequest{Storage: sc.URI, Name: w.Name, RAIDType: rt}
	if w.SizeGibibytes != nil {
		req.CapacityBytes = int64(*w.SizeGibibytes) * gib
	}
	if len(w.PhysicalDisks) > 0 {
		req.Drives = w.PhysicalDisks
		return req, nil
	}
	n := minDrives[rt]
	if w.NumberOfPhysicalDisks != nil {
		n = *w.NumberOfPhysicalDisks
	}
	var free []string
	for _, dr := range sc.Drives {
		if len(dr.Volumes) > 0 || (w.Rotational != nil && *w.Rotational != (dr.MediaType == "HDD")) {
			continue
		}
		free = append(free, dr.ID)
	}
	if len(free) < n {
		return bmc.VolumeRequest{}, fmt.Errorf("%w: %s: %s needs %d free drives on %s, it has %d (%s)", errclass.ErrFailed, at, rt, n, sc.ID, len(free), orNone(free))
	}
	req.Drives = free[:n]
	return req, nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
