package bmc

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestHealthKnobsOnEveryProfile: each simulator health knob reads as the
// fault it is on every profile, whichever sensor resources the profile
// has (legacy Thermal/Power, or ThermalSubsystem/PowerSubsystem with
// Sensors): a failed PSU and an overheat are Critical (the power supply,
// the temperature, where the profile reports that kind), a degraded drive
// Warning, sensors without readings Unknown where the profile has sensors
// (OK where it has none: nothing to judge).
func TestHealthKnobsOnEveryProfile(t *testing.T) {
	ctx := testCtx(t)
	for _, prof := range bmcsim.Profiles() {
		sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: prof})
		c, err := Dial(ctx, Target{Address: sim.SystemAddresses(0)[0], Username: "admin", Password: "password"}, Options{Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", prof, err)
		}
		base, err := c.Health(ctx)
		if err != nil {
			t.Fatalf("%s: %v", prof, err)
		}
		has := func(kind string) bool { _, ok := base.Health.Components[kind]; return ok }
		sensors := has(wire.HealthTemperature) || has(wire.HealthFan)
		for _, k := range []struct {
			name   string
			knob   bmcsim.HealthKnobs
			health string
			kinds  map[string]string // component verdicts, where the profile reports the kind
		}{
			{"psuFailed", bmcsim.HealthKnobs{PSUFailed: true}, wire.HardwareCritical, map[string]string{wire.HealthPowerSupply: wire.HardwareCritical}},
			{"overheat", bmcsim.HealthKnobs{Overheat: true}, wire.HardwareCritical, map[string]string{wire.HealthTemperature: wire.HardwareCritical}},
			{"driveDegraded", bmcsim.HealthKnobs{DriveDegraded: true}, wire.HardwareWarning, nil},
			{"noReadings", bmcsim.HealthKnobs{NoReadings: true}, map[bool]string{true: wire.HardwareUnknown, false: wire.HardwareOK}[sensors],
				map[string]string{wire.HealthTemperature: wire.HardwareUnknown, wire.HealthFan: wire.HardwareUnknown}},
		} {
			if err := sim.SetKnobs(0, bmcsim.Knobs{Health: k.knob}); err != nil {
				t.Fatal(err)
			}
			r, err := c.Health(ctx)
			if err != nil {
				t.Fatalf("%s %s: %v", prof, k.name, err)
			}
			if r.Health.Health != k.health {
				t.Errorf("%s %s: health %s (%v, %v), want %s", prof, k.name, r.Health.Health, r.Health.Components, r.Health.Problems, k.health)
			}
			for kind, want := range k.kinds {
				if has(kind) && r.Health.Components[kind] != want {
					t.Errorf("%s %s: %s reads %q, want %s (%v)", prof, k.name, kind, r.Health.Components[kind], want, r.Health.Problems)
				}
			}
		}
		_ = c.Close(ctx)
	}
}
