package bmcsim

import (
	"encoding/json"
	"strings"
)

// HealthKnobs are hardware faults a BMC reports (health.go): a failed
// power supply, an overheating temperature sensor, a degraded drive, and
// sensors that report no reading.
type HealthKnobs struct {
	// PSUFailed: the first power supply reads State Enabled, Health
	// Critical (and no output), the chassis and system roll up Critical.
	PSUFailed bool `json:"psuFailed,omitempty"`
	// Overheat: the first temperature sensor reads above its critical
	// threshold, Health Critical.
	Overheat bool `json:"overheat,omitempty"`
	// DriveDegraded: the first drive reads Health Warning.
	DriveDegraded bool `json:"driveDegraded,omitempty"`
	// NoReadings: every temperature and fan reading is null (a BMC whose
	// sensors are not ready).
	NoReadings bool `json:"noReadings,omitempty"`
}

// Health overlay: with a health knob set, the BMC's documents say so, as
// a BMC reports a fault: the faulty component's Status.Health (and
// reading), and the Status.HealthRollup of its storage, chassis and
// system. Knobs zero: the fixture as it is. The same knobs act on the
// legacy Thermal and Power resources and on the newer ones (health_new.go:
// ThermalMetrics, Fans, PowerSupplies, Sensors), whichever the profile has.

func (k HealthKnobs) any() bool { return k.PSUFailed || k.Overheat || k.DriveDegraded || k.NoReadings }

// rollup is the worst health the knobs make of the system and chassis.
func (k HealthKnobs) rollup() string {
	switch {
	case k.PSUFailed, k.Overheat:
		return "Critical"
	case k.DriveDegraded:
		return "Warning"
	}
	return ""
}

// overlayHealth applies b's health knobs to d, a copy of r's document.
// b.mu held.
func (b *bmc) overlayHealth(r *resource, d doc) {
	k := b.knobs.Health
	if !k.any() {
		return
	}
	switch r.kind {
	case kindSystem, kindChassis:
		if roll := k.rollup(); roll != "" {
			if st, ok := generic(d["Status"]).(map[string]any); ok {
				st["HealthRollup"] = roll
				d["Status"] = st
			}
		}
	case kindThermal:
		temps, _ := generic(d["Temperatures"]).([]any)
		for i, t := range temps {
			m, ok := t.(map[string]any)
			if !ok {
				continue
			}
			if k.NoReadings {
				m["ReadingCelsius"] = nil
				m["Status"] = map[string]any{"State": "Enabled"}
			}
			if k.Overheat && i == 0 {
				crit, _ := m["UpperThresholdCritical"].(float64)
				m["ReadingCelsius"] = crit + 7
				m["Status"] = map[string]any{"State": "Enabled", "Health": "Critical"}
			}
		}
		if temps != nil {
			d["Temperatures"] = temps
		}
		if fans, _ := generic(d["Fans"]).([]any); k.NoReadings && fans != nil {
			for _, f := range fans {
				if m, ok := f.(map[string]any); ok {
					m["Reading"] = nil
					m["Status"] = map[string]any{"State": "Enabled"}
				}
			}
			d["Fans"] = fans
		}
	case kindPower:
		if psus, _ := generic(d["PowerSupplies"]).([]any); k.PSUFailed && len(psus) > 0 {
			if m, ok := psus[0].(map[string]any); ok {
				m["Status"] = map[string]any{"State": "Enabled", "Health": "Critical"}
				m["LastPowerOutputWatts"] = 0
			}
			d["PowerSupplies"] = psus
		}
	case kindThermalMetrics, kindFan, kindPowerSupply, kindSensor:
		b.overlayNewSensors(r, d, k)
	case kindDrive:
		if k.DriveDegraded && r.path == b.prof.firstDrive() {
			d["Status"] = map[string]any{"State": "Enabled", "Health": "Warning"}
		}
	case kindStorage:
		if k.DriveDegraded && strings.Contains(string(mustJSON(d["Drives"])), `"`+b.prof.firstDrive()+`"`) {
			if st, ok := generic(d["Status"]).(map[string]any); ok {
				st["HealthRollup"] = "Warning"
				d["Status"] = st
			}
		}
	}
}

// generic is v decoded into maps and slices when it is a frozen subtree
// (json.RawMessage); a copy either way, safe to change.
func generic(v any) any {
	var out any
	if err := json.Unmarshal(mustJSON(v), &out); err != nil {
		return nil
	}
	return out
}

func mustJSON(v any) []byte {
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

// firstDrive is the path of the profile's first drive (sorted), "" when it
// has none.
func (p *profile) firstDrive() string {
	p.firstDriveOnce.Do(func() {
		for pth, r := range p.res {
			if r.kind == kindDrive && (p.firstDrivePath == "" || pth < p.firstDrivePath) {
				p.firstDrivePath = pth
			}
		}
	})
	return p.firstDrivePath
}
