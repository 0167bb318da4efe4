package bmc

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestHealthChassisDepthLearnt: health's first read of a chassis expands
// it three levels (a subsystem chassis needs its collections' members);
// a chassis found with the legacy Thermal and Power (the default
// profile) is read one level deep afterwards, with the same verdict and
// readings, while one with subsystems (openbmc) keeps three levels.
func TestHealthChassisDepthLearnt(t *testing.T) {
	ctx := testCtx(t)
	for _, c := range []struct {
		profile, second string
	}{{"default", "?$expand=."}, {"openbmc", "?$expand=.($levels=3)"}} {
		sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: c.profile})
		conn, err := Dial(ctx, Target{Address: sim.SystemAddresses(0)[0], Username: "admin", Password: "password"}, Options{Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", c.profile, err)
		}
		t.Cleanup(func() { _ = conn.Close(ctx) })
		chassisGets := func() map[string]int {
			out := map[string]int{}
			for p, n := range sim.State(0).Gets {
				if strings.HasPrefix(p, "/redfish/v1/Chassis/") && strings.Contains(p, "$expand") {
					out[p[strings.Index(p, "?"):]] += n
				}
			}
			return out
		}
		first, err := conn.Health(ctx)
		if err != nil {
			t.Fatalf("%s: %v", c.profile, err)
		}
		if g := chassisGets(); g["?$expand=.($levels=3)"] != 1 || len(g) != 1 {
			t.Fatalf("%s: first read's chassis GETs %v, want one with $levels=3", c.profile, g)
		}
		before := chassisGets()
		second, err := conn.Health(ctx)
		if err != nil {
			t.Fatalf("%s: %v", c.profile, err)
		}
		after := chassisGets()
		if after[c.second]-before[c.second] != 1 {
			t.Errorf("%s: second read's chassis GETs went %v → %v, want one more %s", c.profile, before, after, c.second)
		}
		if !reflect.DeepEqual(first, second) {
			t.Errorf("%s: second read %+v %+v differs from the first %+v %+v", c.profile, second.Health, second.Readings, first.Health, first.Readings)
		}
	}
}
