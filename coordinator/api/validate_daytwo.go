package api

import (
	"fmt"

	"github.com/rackfence/rackfence/shared/wire"
)

// Bounds of a status's dayTwo (what an agent read of a host's BMC).
const (
	maxDayTwoItems   = 256
	maxDayTwoText    = 256
	maxDayTwoMessage = 1024
)

// validateDayTwoStatus checks status.dayTwo: bounded lists and strings,
// named by their path.
func validateDayTwoStatus(d *wire.DayTwoStatus) error {
	if b := d.BIOS; b != nil {
		if len(b.Settings) > wire.MaxBIOSSettings {
			return fe("status.dayTwo.bios.settings", "has %d attributes; at most %d are allowed", len(b.Settings), wire.MaxBIOSSettings)
		}
		for k, v := range b.Settings {
			if len(k) > maxDayTwoText || len(v) > maxDayTwoText {
				return fe("status.dayTwo.bios.settings", "attribute %.40q: names and values are at most %d characters", k, maxDayTwoText)
			}
		}
		if len(b.NotApplied) > wire.MaxBIOSSettings {
			return fe("status.dayTwo.bios.notApplied", "has %d entries; at most %d are allowed", len(b.NotApplied), wire.MaxBIOSSettings)
		}
		for i, n := range b.NotApplied {
			if n.Name == "" || len(n.Name) > maxDayTwoText || len(n.Value) > maxDayTwoText || len(n.Message) > maxDayTwoMessage {
				return fe(fmt.Sprintf("status.dayTwo.bios.notApplied[%d]", i), "needs a name; name and value at most %d characters, message at most %d", maxDayTwoText, maxDayTwoMessage)
			}
		}
	}
	if len(d.Firmware) > maxDayTwoItems {
		return fe("status.dayTwo.firmware", "has %d components; at most %d are allowed", len(d.Firmware), maxDayTwoItems)
	}
	for i, f := range d.Firmware {
		if f.Component == "" || len(f.Component) > maxDayTwoText || len(f.Version) > maxDayTwoText {
			return fe(fmt.Sprintf("status.dayTwo.firmware[%d]", i), "needs a component; component and version at most %d characters", maxDayTwoText)
		}
	}
	if n := len(d.HardwareRAIDVolumes) + len(d.SoftwareRAIDVolumes); n > maxDayTwoItems {
		return fe("status.dayTwo.hardwareRAIDVolumes", "%d volumes; at most %d are allowed", n, maxDayTwoItems)
	}
	for i, v := range d.HardwareRAIDVolumes {
		if len(v.Name) > maxDayTwoText || len(v.Level) > maxDayTwoText || len(v.Controller) > maxDayTwoText || len(v.PhysicalDisks) > maxDayTwoItems {
			return fe(fmt.Sprintf("status.dayTwo.hardwareRAIDVolumes[%d]", i), "name, level and controller at most %d characters, at most %d disks", maxDayTwoText, maxDayTwoItems)
		}
	}
	if e := d.LastErase; e != nil {
		if e.Time.IsZero() {
			return fe("status.dayTwo.lastErase.time", "is required: when the erase ended")
		}
		if len(e.Disks) > maxDayTwoItems {
			return fe("status.dayTwo.lastErase.disks", "has %d entries; at most %d are allowed", len(e.Disks), maxDayTwoItems)
		}
		for i, s := range e.Disks {
			if len(s) > maxDayTwoText {
				return fe(fmt.Sprintf("status.dayTwo.lastErase.disks[%d]", i), "is %d characters long; at most %d are allowed", len(s), maxDayTwoText)
			}
		}
	}
	return nil
}
