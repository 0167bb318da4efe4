package wire

import "time"

// HardwareHealth is a host's hardware health as its BMC reports it (the
// Status.Health and HealthRollup of the system, its chassis and storage,
// and the chassis' temperature sensors, fans and power supplies): the
// verdict only, so the status changes when the health does, not with
// every reading (readings are the agent's Prometheus metrics).
type HardwareHealth struct {
	// Health is the worst of Components: OK, Warning, Critical, or
	// Unknown when some component has no reading and none is worse (a
	// missing reading is never OK).
	Health string `json:"health"`
	// Components is the worst health of each kind of component the BMC
	// reports (HealthKinds); a kind the BMC does not report is absent.
	Components map[string]string `json:"components,omitempty"`
	// Problems names each component that is not OK, worst first, e.g.
	// "power supply PSU 1: Critical" (at most MaxHealthProblems).
	Problems []string `json:"problems,omitempty"`
	// Since is when the agent first read this verdict (Health,
	// Components and Problems as they are).
	Since time.Time `json:"since"`
}

// Health values, best first.
const (
	HardwareOK       = "OK"
	HardwareUnknown  = "Unknown"
	HardwareWarning  = "Warning"
	HardwareCritical = "Critical"
)

// HardwareHealths are the valid HardwareHealth.Health values, best first.
var HardwareHealths = []string{HardwareOK, HardwareUnknown, HardwareWarning, HardwareCritical}

// Component kinds of HardwareHealth.Components.
const (
	HealthSystem      = "system"
	HealthChassis     = "chassis"
	HealthTemperature = "temperature"
	HealthFan         = "fan"
	HealthPowerSupply = "powerSupply"
	HealthStorage     = "storage"
)

// HealthKinds are the component kinds, in the order reports list them.
var HealthKinds = []string{HealthSystem, HealthChassis, HealthTemperature, HealthFan, HealthPowerSupply, HealthStorage}

// MaxHealthProblems bounds HardwareHealth.Problems.
const MaxHealthProblems = 16

// HealthRank orders health values: OK 0, Unknown 1, Warning 2, Critical
// 3; -1 for anything else.
func HealthRank(h string) int {
	for i, v := range HardwareHealths {
		if v == h {
			return i
		}
	}
	return -1
}

// WorseHealth is the worse of a and b.
func WorseHealth(a, b string) string {
	if HealthRank(b) > HealthRank(a) {
		return b
	}
	return a
}
