package bmcsim

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
