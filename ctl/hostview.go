package ctl

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// hostState is a host's provisioning state for display.
func hostState(h *wire.Host) string {
	if h.Status == nil || h.Status.ProvisioningState == "" {
		if h.DeletionRequested {
			return "deleting"
		}
		return "pending"
	}
	return h.Status.ProvisioningState
}

func hostOpStatus(h *wire.Host) string {
	if h.Status == nil {
		return ""
	}
	return h.Status.OperationalStatus
}

// hostHealth is the hardware health's verdict ("" when not read).
func hostHealth(h *wire.Host) string {
	if h.Status == nil || h.Status.Health == nil {
		return ""
	}
	return h.Status.Health.Health
}

func hostPower(h *wire.Host) string {
	if h.Status == nil || h.Status.LastUpdated.IsZero() {
		return ""
	}
	if h.Status.PowerState != "" {
		return h.Status.PowerState // on, off or unknown, as the BMC read it
	}
	if h.Status.PoweredOn {
		return "on"
	}
	return "off"
}

// hostError is "TYPE (OPERATION) xCOUNT" for the list, or "" without an
// error. The operation is named when the message says which one failed:
// a power-off refused for bad credentials is a "registration error" (the
// credentials are registration's), which alone reads as if registering
// had failed.
func hostError(h *wire.Host) string {
	if h.Status == nil || h.Status.ErrorType == "" {
		return ""
	}
	s := h.Status.ErrorType
	if op := failedOperation(h.Status.ErrorMessage); op != "" {
		s += " (" + op + ")"
	}
	if h.Status.ErrorCount > 1 {
		s += fmt.Sprintf(" x%d", h.Status.ErrorCount)
	}
	return s
}

// agentOperations are the rack agent's action names, which start the
// message of an error a failed action set ("power-off: ...").
var agentOperations = []string{"register", "inspect", "reinspect", "provide", "provision", "deprovision",
	"adopt", "detach", "delete", "maintenance-on", "maintenance-off", "power-on", "power-off", "soft-power-off"}

// failedOperation is the operation an error message names first, or "".
func failedOperation(msg string) string {
	op, _, ok := strings.Cut(msg, ": ")
	if ok && slices.Contains(agentOperations, op) {
		return op
	}
	return ""
}

// hostIntents is the short intents cell: "detach", "drain-maintenance*"; a
// star marks an intent the lease holder has not acknowledged yet.
func hostIntents(h *wire.Host) (string, bool) {
	var parts []string
	pending := false
	add := func(name string, in *wire.Intent) {
		if in == nil {
			return
		}
		if !in.Acknowledged {
			name += "*"
			pending = true
		}
		parts = append(parts, name)
	}
	if in := h.Intents; in != nil {
		add("detach", in.Detach)
		if d := in.Drain; d != nil {
			add("drain-"+d.Mode, d)
		}
		add("resume", in.Resume)
		if r := in.Reboot; r != nil {
			add("reboot-"+r.Mode, r)
		}
		add("inspect", in.Inspect)
		add("service", in.Service)
		keys := make([]string, 0, len(in.PowerOff))
		for k := range in.PowerOff {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			add("poweroff:"+k, in.PowerOff[k])
		}
	}
	if h.DeletionRequested {
		parts = append(parts, "delete")
	}
	return strings.Join(parts, ","), pending
}

// hostTable is "host list" as a table; labels adds a LABELS column (last:
// it is the one cut to the terminal's width).
func hostTable(w io.Writer, hosts []wire.Host, width int, labels bool) {
	t := &table{header: hostTableHeader(labels)}
	anyPending := false
	for i := range hosts {
		cells, p := hostCells(&hosts[i], labels)
		anyPending = anyPending || p
		t.add(cells...)
	}
	if len(hosts) == 0 {
		fmt.Fprintln(w, "No hosts.")
		return
	}
	t.write(w, width)
	if anyPending {
		fmt.Fprintln(w, "* not yet acknowledged by the rack's lease holder")
	}
}

// hostTableHeader is the header of hostTable.
func hostTableHeader(labels bool) []string {
	h := []string{"NAME", "RACK", "STATE", "STATUS", "POWER", "INTENTS", "ERROR"}
	if labels {
		h = append(h, "LABELS")
	}
	return h
}

// hostCells is a host's row of hostTable; pending: an intent is not
// acknowledged yet.
func hostCells(h *wire.Host, labels bool) (cells []string, pending bool) {
	in, pending := hostIntents(h)
	cells = []string{h.Name, h.Rack, hostState(h), hostOpStatus(h), hostPower(h), in, hostError(h)}
	if labels {
		cells = append(cells, wire.FormatLabels(h.Labels))
	}
	return cells, pending
}

// hostDetail is "host get" as a table.
func hostDetail(w io.Writer, h *wire.Host) {
	k := &kv{}
	k.add("Name", h.Name)
	k.add("Rack", h.Rack)
	bmc := h.BMC.Address
	if bmc == "" {
		bmc = "none (the host rests unmanaged until BMC details are added)"
	} else if h.BMC.Credentials != "" {
		bmc += " (credentials " + h.BMC.Credentials + ")"
	}
	k.add("BMC", bmc)
	k.add("Boot MAC", h.BootMACAddress)
	k.add("Online", fmt.Sprint(h.Online))
	if h.ExternallyProvisioned {
		k.add("Externally provisioned", "true (adopted, not deployed)")
	}
	if h.Image != nil {
		img := h.Image.URL
		var extra []string
		if h.Image.Format != "" {
			extra = append(extra, "format "+h.Image.Format)
		}
		if h.Image.Checksum != "" {
			c := h.Image.Checksum
			if t := h.Image.ChecksumType; t != "" {
				c = t + " " + c
			}
			extra = append(extra, c)
		}
		if len(extra) > 0 {
			img += " (" + strings.Join(extra, ", ") + ")"
		}
		k.add("Image", img)
	}
	if h.BootMode != "" {
		k.add("Boot mode", h.BootMode)
	}
	if h.BootMethod != "" {
		k.add("Boot method", h.BootMethod)
	}
	if h.AutomatedCleaningMode != "" {
		k.add("Automated cleaning", h.AutomatedCleaningMode)
	}
	if r := h.RootDeviceHints; r != nil {
		k.add("Root device hints", rootHints(r)+" (Ironic only: the direct provisioner writes no disk)")
	}
	dataRefs(k, h)
	k.add("Consumer", h.Consumer)
	if len(h.Labels) > 0 {
		k.add("Labels", wire.FormatLabels(h.Labels))
	}
	if h.Handoff != nil {
		conf := "awaiting confirmation from the source tier"
		if h.Handoff.Confirmed {
			conf = "confirmed"
		}
		k.add("Handoff", fmt.Sprintf("from tier %s (cluster %s), detach index %d, %s", h.Handoff.SourceTier, h.Handoff.SourceClusterID, h.Handoff.DetachIndex, conf))
	}
	if h.PivotedTo != "" {
		k.add("Pivoted to", h.PivotedTo)
	}
	if h.DeletionRequested {
		k.add("Deletion", "requested; the rack agent finishes it")
	}
	k.add("State", hostState(h))
	if s := h.Status; s != nil {
		k.add("Status", s.OperationalStatus)
		k.add("Power", hostPower(h))
		if ev := s.Extra[wire.ExtraEvents]; ev != "" {
			k.add("BMC events", ev)
		}
		if hh := s.Health; hh != nil {
			k.add("Health", healthSummary(hh))
			for _, p := range hh.Problems {
				k.more(p)
			}
		}
		if s.ErrorType != "" {
			what := s.ErrorType
			if op := failedOperation(s.ErrorMessage); op != "" {
				what += ", " + op + " failed"
			}
			k.add("Error", fmt.Sprintf("%s (count %d): %s", what, s.ErrorCount, s.ErrorMessage))
		}
		if s.ProvisioningID != "" {
			k.add("Provisioning ID", s.ProvisioningID)
		}
		if !s.LastUpdated.IsZero() {
			k.add("Reported", fmt.Sprintf("%s under lease epoch %d", s.LastUpdated.UTC().Format(time.RFC3339), s.Epoch))
		}
		if hw := s.HardwareDetails; hw != nil {
			k.add("Hardware", hardwareSummary(hw))
		}
		if bd := s.BMCDetails; bd != nil {
			k.add("BMC details", bmcSummary(bd))
			for i, p := range bd.Problems {
				if i == 0 {
					k.add("BMC lacks", p)
				} else {
					k.more(p)
				}
			}
		}
		if cd := s.ConfigDrive; cd != nil {
			k.add("Config drive", configDriveLine(cd))
			if cd.Server != "" {
				k.more("served by " + cd.Server)
			}
		}
		for _, l := range operationLines(s, now()) {
			k.add(l[0], l[1])
		}
	} else {
		k.add("Status", "not reported yet (no rack agent has acted on it)")
	}
	dayTwoLines(k, h)
	if t := h.Task; t != nil {
		k.add("BMC task", taskLine(t))
		k.more("detach, drain, pivot and delete wait for it (--force risks " + wire.BMCTaskLeftover(t.Kind) + ")")
	}
	lines := intentLines(h)
	if len(lines) == 0 {
		k.add("Intents", "")
	}
	for i, l := range lines {
		if i == 0 {
			k.add("Intents", l)
		} else {
			k.more(l)
		}
	}
	k.write(w)
}

// taskLine describes a host's running BMC task for rackfencectl host get.
func taskLine(t *wire.BMCTask) string {
	s := t.Kind
	if t.Component != "" {
		s += " of " + t.Component
	}
	s += ", " + t.TaskURI + ", started " + t.StartedAt.UTC().Format(time.RFC3339) + " by " + t.Holder
	if t.AdoptedEpoch != 0 {
		s += fmt.Sprintf(", adopted under epoch %d", t.AdoptedEpoch)
	}
	return s
}

func intentLines(h *wire.Host) []string {
	if h.Intents == nil {
		return nil
	}
	var out []string
	one := func(name string, in *wire.Intent) {
		if in == nil {
			return
		}
		s := name
		if in.Acknowledged {
			s += fmt.Sprintf(", acknowledged under epoch %d", in.AckEpoch)
		} else {
			s += ", waiting for the lease holder's acknowledgement"
		}
		if in.Force {
			s += ", forced"
		}
		if in.Actor != "" {
			s += ", by " + in.Actor
		}
		if in.Reason != "" {
			s += fmt.Sprintf(", reason %q", in.Reason)
		}
		out = append(out, s)
	}
	one("detach", h.Intents.Detach)
	if d := h.Intents.Drain; d != nil {
		one("drain "+d.Mode, d)
	}
	one("resume", h.Intents.Resume)
	if r := h.Intents.Reboot; r != nil {
		one("reboot "+r.Mode, r)
	}
	one("inspect", h.Intents.Inspect)
	if sv := h.Intents.Service; sv != nil && sv.Plan != nil {
		one("service ("+sv.Plan.Message+")", sv)
	} else {
		one("service", sv)
	}
	keys := make([]string, 0, len(h.Intents.PowerOff))
	for k := range h.Intents.PowerOff {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		in := h.Intents.PowerOff[k]
		one("power-off ("+in.Mode+") held by "+k, in)
	}
	return out
}

func hardwareSummary(hw *wire.HardwareDetails) string {
	var p []string
	if m := strings.TrimSpace(hw.Manufacturer + " " + hw.Model); m != "" {
		p = append(p, m)
	}
	if n := len(hw.CPUs); n > 0 {
		p = append(p, fmt.Sprintf("%d CPU", n))
	}
	if hw.MemoryMiB > 0 {
		p = append(p, fmt.Sprintf("%d GiB", hw.MemoryMiB/1024))
	}
	if n := len(hw.NICs); n > 0 {
		p = append(p, fmt.Sprintf("%d NIC", n))
	}
	if n := len(hw.Disks); n > 0 {
		p = append(p, fmt.Sprintf("%d disk", n))
	}
	if n := len(hw.Accelerators); n > 0 {
		p = append(p, fmt.Sprintf("%d accelerator", n))
	}
	if hw.SerialNumber != "" {
		p = append(p, "serial "+hw.SerialNumber)
	}
	return strings.Join(p, ", ")
}

// bmcSummary is what registration learnt about the BMC, on one line: what
// it is, the auth that worked, the system, where virtual media lives and
// how it is driven, the boot modes.
func bmcSummary(bd *wire.BMCDetails) string {
	var p []string
	what := bd.Protocol
	if bd.RedfishVersion != "" {
		what += " " + bd.RedfishVersion
	}
	if m := strings.TrimSpace(bd.Vendor + " " + bd.Model); m != "" {
		what += ", " + m
	}
	if bd.FirmwareVersion != "" {
		what += " firmware " + bd.FirmwareVersion
	}
	p = append(p, what)
	if bd.Auth != "" {
		p = append(p, "auth "+bd.Auth)
	}
	if bd.System != "" {
		p = append(p, "system "+bd.System)
	}
	switch {
	case bd.VirtualMedia != "":
		p = append(p, "virtual media "+bd.VirtualMedia+" by "+bd.VirtualMediaMethod)
	case bd.Protocol == "redfish":
		p = append(p, "no virtual media")
	}
	if len(bd.BootModes) > 0 {
		p = append(p, "boot modes "+strings.Join(bd.BootModes, "/"))
	}
	return strings.Join(p, ", ")
}

func sortHosts(hs []wire.Host) {
	sort.Slice(hs, func(i, j int) bool { return hs[i].Name < hs[j].Name })
}

// now is the clock "host get" measures running operations with.
var now = time.Now

// operationStates are the provisioning states of status.operationHistory's
// operations.
var operationStates = map[string]string{
	wire.OperationRegister:    wire.StateRegistering,
	wire.OperationInspect:     wire.StateInspecting,
	wire.OperationProvision:   wire.StateProvisioning,
	wire.OperationDeprovision: wire.StateDeprovisioning,
}

// operationLines is one key/value line per operation of the status's
// history that ever started, in lifecycle order: its duration and end,
// running (the host is in its state) with the time so far, or not
// finished (failed or abandoned, the host left its state).
func operationLines(s *wire.HostStatus, at time.Time) [][2]string {
	oh := s.OperationHistory
	if oh == nil {
		return nil
	}
	var out [][2]string
	for _, op := range wire.Operations {
		m := oh.Metric(op)
		if m.Start.IsZero() {
			continue
		}
		key := strings.ToUpper(op[:1]) + op[1:]
		var v string
		switch {
		case !m.End.IsZero():
			v = fmt.Sprintf("%s (ended %s)", opDuration(m.Duration()), m.End.UTC().Format(time.RFC3339))
		case s.ProvisioningState == operationStates[op]:
			v = fmt.Sprintf("running for %s (since %s)", opDuration(at.Sub(m.Start)), m.Start.UTC().Format(time.RFC3339))
		default:
			v = fmt.Sprintf("did not finish (started %s)", m.Start.UTC().Format(time.RFC3339))
		}
		out = append(out, [2]string{key, v})
	}
	return out
}

// opDuration renders an operation's duration: tenths of a second under a
// minute (4.2 s), whole seconds above (12m5s).
func opDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// rootHints is root device hints as name=value pairs, in the API's order.
func rootHints(r *wire.RootDeviceHints) string {
	var out []string
	add := func(k, v string) {
		if v != "" {
			out = append(out, k+"="+v)
		}
	}
	add("deviceName", r.DeviceName)
	add("hctl", r.HCTL)
	add("model", r.Model)
	add("vendor", r.Vendor)
	add("serialNumber", r.SerialNumber)
	if r.MinSizeGigabytes > 0 {
		add("minSizeGigabytes", fmt.Sprint(r.MinSizeGigabytes))
	}
	add("wwn", r.WWN)
	add("wwnWithExtension", r.WWNWithExtension)
	add("wwnVendorExtension", r.WWNVendorExtension)
	if r.Rotational != nil {
		add("rotational", fmt.Sprint(*r.Rotational))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " ")
}

// healthSummary is the hardware health on one line: the verdict, each
// kind's health, since when.
func healthSummary(h *wire.HardwareHealth) string {
	var kinds []string
	for _, k := range wire.HealthKinds {
		if v, ok := h.Components[k]; ok {
			kinds = append(kinds, k+" "+v)
		}
	}
	out := h.Health
	if len(kinds) > 0 {
		out += " (" + strings.Join(kinds, ", ") + ")"
	}
	if !h.Since.IsZero() {
		out += " since " + h.Since.UTC().Format(time.RFC3339)
	}
	return out
}
