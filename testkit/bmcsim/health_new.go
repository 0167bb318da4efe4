package bmcsim

import "strings"

// The health knobs on the newer sensor resources (DSP0268 2020.4 on):
//
//   - Overheat: the first reading of ThermalMetrics.TemperatureReadingsCelsius
//     reads 7 °C above the critical threshold of the Sensor its
//     DataSourceUri names (95 °C when it names none), and that Sensor
//     reads the same with Status.Health Critical;
//   - NoReadings: every ThermalMetrics reading, temperature Sensor reading
//     and Fan SpeedPercent.Reading is null, with no Health;
//   - PSUFailed: the first PowerSupply (by path) reads Health Critical.

// defaultCritical is the critical temperature when no Sensor gives one.
const defaultCritical = 95.0

// overlayNewSensors applies k to d, a copy of r's document. b.mu held.
func (b *bmc) overlayNewSensors(r *resource, d doc, k HealthKnobs) {
	switch r.kind {
	case kindThermalMetrics:
		temps, _ := generic(d["TemperatureReadingsCelsius"]).([]any)
		for i, t := range temps {
			m, ok := t.(map[string]any)
			if !ok {
				continue
			}
			if k.NoReadings {
				m["Reading"] = nil
			}
			if k.Overheat && i == 0 {
				src, _ := m["DataSourceUri"].(string)
				m["Reading"] = b.prof.criticalOf(src) + 7
			}
		}
		if temps != nil {
			d["TemperatureReadingsCelsius"] = temps
		}
	case kindSensor:
		if rt, _ := d["ReadingType"].(string); rt != "Temperature" {
			return
		}
		if k.NoReadings {
			d["Reading"] = nil
			d["Status"] = map[string]any{"State": "Enabled"}
		}
		if k.Overheat && r.path == b.prof.firstTempSensor() {
			d["Reading"] = b.prof.criticalOf(r.path) + 7
			d["Status"] = map[string]any{"State": "Enabled", "Health": "Critical"}
		}
	case kindFan:
		if k.NoReadings {
			if sp, ok := generic(d["SpeedPercent"]).(map[string]any); ok {
				sp["Reading"] = nil
				d["SpeedPercent"] = sp
			}
			d["Status"] = map[string]any{"State": "Enabled"}
		}
	case kindPowerSupply:
		if k.PSUFailed && r.path == b.prof.firstOfKind(kindPowerSupply) {
			d["Status"] = map[string]any{"State": "Enabled", "Health": "Critical"}
		}
	}
}

// criticalOf is the UpperCritical threshold of the Sensor at path,
// defaultCritical when there is none.
func (p *profile) criticalOf(path string) float64 {
	r := p.res[strings.TrimSuffix(path, "/")]
	if r == nil || r.kind != kindSensor {
		return defaultCritical
	}
	th, _ := generic(r.tree["Thresholds"]).(map[string]any)
	uc, _ := th["UpperCritical"].(map[string]any)
	if v, ok := uc["Reading"].(float64); ok {
		return v
	}
	return defaultCritical
}

// firstTempSensor is the Sensor the first ThermalMetrics reading names
// ("" when none).
func (p *profile) firstTempSensor() string {
	tm := p.res[p.firstOfKind(kindThermalMetrics)]
	if tm == nil {
		return ""
	}
	temps, _ := generic(tm.tree["TemperatureReadingsCelsius"]).([]any)
	if len(temps) == 0 {
		return ""
	}
	m, _ := temps[0].(map[string]any)
	src, _ := m["DataSourceUri"].(string)
	return strings.TrimSuffix(src, "/")
}

// firstOfKind is the first path (sorted) of a resource of kind.
func (p *profile) firstOfKind(kind int) string {
	first := ""
	for pth, r := range p.res {
		if r.kind == kind && (first == "" || pth < first) {
			first = pth
		}
	}
	return first
}
