package bmc

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// Health from the simulator's documents: every profile reads a verdict
// (never an error); the default profile's legacy Thermal and Power read
// OK with their readings, and each health knob turns the component it
// names (and only what it rolls up to) Warning or Critical; sensors with
// no reading are Unknown, never OK.
func TestHealthFromTheBMC(t *testing.T) {
	ctx := testCtx(t)
	for _, prof := range bmcsim.Profiles() {
		sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: prof})
		c, err := Dial(ctx, Target{Address: sim.SystemAddresses(0)[0], Username: "admin", Password: "password"}, Options{Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", prof, err)
		}
		before := sim.State(0).Requests
		r, err := c.Health(ctx)
		if err != nil || r.Health == nil {
			t.Fatalf("%s: health %+v, %v", prof, r, err)
		}
		reqs := sim.State(0).Requests - before
		if r.Health.Components[wire.HealthSystem] != wire.HardwareOK || r.Health.Health != wire.HardwareOK {
			t.Errorf("%s: health %+v; want OK with the system's", prof, r.Health)
		}
		var kinds []string
		for _, k := range wire.HealthKinds {
			if _, ok := r.Health.Components[k]; ok {
				kinds = append(kinds, k)
			}
		}
		t.Logf("%-20s %s; %d readings; %d requests", prof, strings.Join(kinds, ", "), len(r.Readings), reqs)
		if prof == "openbmc" && (len(r.Readings) != 4 || r.Health.Components[wire.HealthFan] != wire.HardwareOK ||
			r.Health.Components[wire.HealthPowerSupply] != wire.HardwareOK || r.Health.Components[wire.HealthTemperature] != wire.HardwareOK) {
			t.Errorf("openbmc (ThermalSubsystem, PowerSubsystem): %+v, readings %+v", r.Health, r.Readings)
		}
		_ = c.Close(ctx)
	}

	sim := startSim(t, bmcsim.Config{Hosts: 1})
	c, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	r, err := c.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"system": "OK", "chassis": "OK", "temperature": "OK", "fan": "OK", "powerSupply": "OK", "storage": "OK"}
	if !reflect.DeepEqual(r.Health.Components, want) || len(r.Health.Problems) > 0 {
		t.Fatalf("default profile: %+v; want every kind OK", r.Health)
	}
	if len(r.Readings) != 4 || r.Readings[0] != (HealthReading{Kind: "fan", Name: "Fan1", Value: 6000}) ||
		r.Readings[2] != (HealthReading{Kind: "temperature", Name: "CPU1 Temp", Value: 42}) {
		t.Fatalf("readings %+v", r.Readings)
	}
	for _, c2 := range []struct {
		knob     bmcsim.HealthKnobs
		health   string
		kinds    map[string]string
		problems []string
	}{
		{bmcsim.HealthKnobs{PSUFailed: true}, "Critical", map[string]string{"powerSupply": "Critical", "system": "Critical", "chassis": "Critical"},
			[]string{"chassis Chassis/1: Critical", "power supply PSU 1: Critical", "system Systems/1: Critical"}},
		{bmcsim.HealthKnobs{Overheat: true}, "Critical", map[string]string{"temperature": "Critical", "system": "Critical", "chassis": "Critical"},
			[]string{"chassis Chassis/1: Critical", "system Systems/1: Critical", "temperature CPU1 Temp: Critical"}},
		{bmcsim.HealthKnobs{DriveDegraded: true}, "Warning", map[string]string{"storage": "Warning", "system": "Warning", "chassis": "Warning"},
			[]string{"chassis Chassis/1: Warning", "storage Storage Controller: Warning", "system Systems/1: Warning"}},
		{bmcsim.HealthKnobs{NoReadings: true}, "Unknown", map[string]string{"temperature": "Unknown", "fan": "Unknown"},
			[]string{"fan Fan1: Unknown", "fan Fan2: Unknown", "temperature CPU1 Temp: Unknown", "temperature Inlet Temp: Unknown"}},
	} {
		if err := sim.SetKnobs(0, bmcsim.Knobs{Health: c2.knob}); err != nil {
			t.Fatal(err)
		}
		r, err := c.Health(ctx)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]string{}
		for k, v := range want {
			kinds[k] = v
		}
		for k, v := range c2.kinds {
			kinds[k] = v
		}
		if r.Health.Health != c2.health || !reflect.DeepEqual(r.Health.Components, kinds) || !reflect.DeepEqual(r.Health.Problems, c2.problems) {
			t.Errorf("knob %+v: %+v\nwant %s %v %s", c2.knob, r.Health, c2.health, kinds, strings.Join(c2.problems, "; "))
		}
	}
}
