package ctl

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// dayTwoLines adds what the host's day-two spec asks for beside what its
// status.dayTwo says it has: BIOS settings (desired → current, and what
// did not take with the BMC's word), firmware (desired version, and the
// inventory), RAID volumes (desired, then found) and the last erase.
func dayTwoLines(k *kv, h *wire.Host) {
	var cur wire.DayTwoStatus
	if h.Status != nil && h.Status.DayTwo != nil {
		cur = *h.Status.DayTwo
	}
	var lines []string
	if b := h.BIOS; b != nil {
		for _, n := range []struct {
			name string
			v    *bool
		}{{"simultaneousMultithreadingEnabled", b.SimultaneousMultithreadingEnabled}, {"sriovEnabled", b.SRIOVEnabled}, {"virtualizationEnabled", b.VirtualizationEnabled}} {
			if n.v != nil {
				lines = append(lines, fmt.Sprintf("%s: want %t (the vendor's attribute)", n.name, *n.v))
			}
		}
		for _, name := range sortedSettings(b.Settings) {
			lines = append(lines, biosLine(name, b.Settings[name], cur.BIOS))
		}
	}
	if cb := cur.BIOS; cb != nil {
		for _, name := range sortedSettings(cb.Settings) {
			if h.BIOS == nil || h.BIOS.Settings[name] == "" {
				lines = append(lines, fmt.Sprintf("%s: is %s", name, cb.Settings[name]))
			}
		}
		if !cb.LastApplied.IsZero() {
			lines = append(lines, "last applied "+cb.LastApplied.UTC().Format(time.RFC3339))
		}
	}
	addLines(k, "BIOS", lines)

	lines = nil
	for _, c := range h.Firmware {
		v := c.Version
		if v == "" {
			v = "(no version given: done when it changes)"
		}
		lines = append(lines, fmt.Sprintf("%s: want %s", c.Component, v))
	}
	for _, f := range cur.Firmware {
		lines = append(lines, fmt.Sprintf("%s: is %s", f.Component, f.Version))
	}
	addLines(k, "Firmware", lines)

	lines = nil
	if r := h.RAID; r != nil {
		for _, v := range r.HardwareRAIDVolumes {
			lines = append(lines, "want "+volumeLine(v))
		}
		for _, v := range r.SoftwareRAIDVolumes {
			lines = append(lines, "want software RAID "+v.Level+" (Ironic only)")
		}
		if !r.KeepExisting && len(r.HardwareRAIDVolumes) > 0 {
			lines = append(lines, "other volumes are deleted (keepExisting false)")
		}
	}
	for _, v := range cur.HardwareRAIDVolumes {
		lines = append(lines, "is "+volumeLine(v))
	}
	addLines(k, "RAID", lines)

	if e := cur.LastErase; e != nil {
		k.add("Last erase", e.Time.UTC().Format(time.RFC3339)+": "+strings.Join(e.Disks, "; "))
	}
}

func biosLine(name, want string, cur *wire.BIOSStatus) string {
	s := fmt.Sprintf("%s: want %s", name, want)
	if cur == nil {
		return s + ", not read yet"
	}
	have, ok := cur.Settings[name]
	switch {
	case !ok:
		s += ", not read yet"
	case have == want:
		s += ", is " + have
	default:
		s += ", is " + have + " (differs)"
	}
	for _, n := range cur.NotApplied {
		if n.Name == name {
			s += "; did not take"
			if n.Message != "" {
				s += ": " + n.Message
			}
		}
	}
	return s
}

func volumeLine(v wire.HardwareRAIDVolume) string {
	s := "RAID " + v.Level
	if v.Name != "" {
		s += " " + v.Name
	}
	if v.SizeGibibytes != nil && *v.SizeGibibytes > 0 {
		s += fmt.Sprintf(", %d GiB", *v.SizeGibibytes)
	}
	if v.Controller != "" {
		s += " on " + v.Controller
	}
	if len(v.PhysicalDisks) > 0 {
		s += " (" + strings.Join(v.PhysicalDisks, ", ") + ")"
	}
	return s
}

func addLines(k *kv, key string, lines []string) {
	for i, l := range lines {
		if i == 0 {
			k.add(key, l)
		} else {
			k.more(l)
		}
	}
}

func sortedSettings(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
