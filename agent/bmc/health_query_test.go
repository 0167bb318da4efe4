package bmc

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// healthFake is a service whose health needs the system, its chassis,
// the chassis' Thermal and Power and two storage subsystems; queries
// advertises $expand (3 levels) and $select at the root.
func healthFake(t *testing.T, queries bool) *fakeRF {
	f := oneSystem(t, true, map[string]any{
		"Status":  map[string]any{"State": "Enabled", "Health": "OK", "HealthRollup": "Critical"},
		"Storage": odata("/redfish/v1/Systems/1/Storage"),
		"Links":   map[string]any{"ManagedBy": odatas("/redfish/v1/Managers/1"), "Chassis": odatas("/redfish/v1/Chassis/1")},
	})
	if queries {
		f.docs["/redfish/v1"]["ProtocolFeaturesSupported"] = map[string]any{"SelectQuery": true,
			"ExpandQuery": map[string]any{"NoLinks": true, "Levels": true, "MaxLevels": 3}}
	}
	f.docs["/redfish/v1/Chassis/1"] = map[string]any{"@odata.id": "/redfish/v1/Chassis/1", "Status": map[string]any{"Health": "OK"},
		"Thermal": odata("/redfish/v1/Chassis/1/Thermal"), "Power": odata("/redfish/v1/Chassis/1/Power")}
	f.docs["/redfish/v1/Chassis/1/Thermal"] = map[string]any{"@odata.id": "/redfish/v1/Chassis/1/Thermal",
		"Temperatures": []any{map[string]any{"Name": "CPU Temp", "ReadingCelsius": 45, "UpperThresholdCritical": 90}},
		"Fans":         []any{map[string]any{"Name": "Fan1", "Reading": 5000, "Status": map[string]any{"Health": "OK"}}}}
	f.docs["/redfish/v1/Chassis/1/Power"] = map[string]any{"@odata.id": "/redfish/v1/Chassis/1/Power",
		"PowerSupplies": []any{map[string]any{"Name": "PSU1", "Status": map[string]any{"State": "Enabled", "Health": "Critical"}}}}
	f.docs["/redfish/v1/Systems/1/Storage"] = coll("/redfish/v1/Systems/1/Storage/1", "/redfish/v1/Systems/1/Storage/2")
	f.docs["/redfish/v1/Systems/1/Storage/1"] = map[string]any{"@odata.id": "/redfish/v1/Systems/1/Storage/1", "Name": "RAID",
		"Status": map[string]any{"Health": "OK", "HealthRollup": "Warning"}}
	f.docs["/redfish/v1/Systems/1/Storage/2"] = map[string]any{"@odata.id": "/redfish/v1/Systems/1/Storage/2", "Name": "NVMe",
		"Status": map[string]any{"Health": "OK"}}
	return f
}

// TestHealthQueriesCheckedNotTrusted: a service that advertises $expand
// and $select but ignores them, refuses them (400, 404, 501), answers an
// expanded collection without its members, or answers $select without
// what was asked reads the same health as a service advertising neither;
// after a refusal or a wrong $select answer the Conn no longer sends that
// query (the first read takes discovery's system document: no $select).
func TestHealthQueriesCheckedNotTrusted(t *testing.T) {
	ref := healthFake(t, false)
	rc, err := dialFake(t, ref, "", "password")
	if err != nil {
		t.Fatal(err)
	}
	want, err := rc.Health(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if want.Health.Health != "Critical" || want.Health.Components["storage"] != "Warning" || len(want.Readings) != 2 {
		t.Fatalf("reference health %+v %+v", want.Health, want.Readings)
	}
	for _, c := range []struct {
		name               string
		expand, selects    int
		expandEmpty, drops bool
		noExpand, noSelect bool // the second read sends no $expand, no $select
	}{
		{name: "ignored"},
		{name: "expand 400", expand: 400, noExpand: true},
		{name: "expand 404", expand: 404, noExpand: true},
		{name: "expand 501", expand: 501, noExpand: true},
		{name: "expanded collection without members", expandEmpty: true},
		{name: "select 400", selects: 400, noSelect: true},
		{name: "select 501", selects: 501, noSelect: true},
		{name: "select drops the property", drops: true, noSelect: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := healthFake(t, true)
			f.expand, f.selects, f.expandEmpty, f.selectDrops = c.expand, c.selects, c.expandEmpty, c.drops
			conn, err := dialFake(t, f, "", "password")
			if err != nil {
				t.Fatal(err)
			}
			// The first read takes the system document discovery read
			// (no $select sent); the second sends the queries; the third
			// must not send one the service answered wrongly.
			for i := 0; i < 3; i++ {
				mark := len(f.requests())
				got, err := conn.Health(testCtx(t))
				if err != nil {
					t.Fatalf("health %d: %v", i, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("health %d: %+v %+v\nwant %+v %+v", i, got.Health, got.Readings, want.Health, want.Readings)
				}
				if i < 2 {
					continue
				}
				for _, r := range f.requests()[mark:] {
					if c.noExpand && strings.Contains(r, "$expand") || c.noSelect && strings.Contains(r, "$select") {
						t.Errorf("second read sent %q after the service answered the query wrongly", r)
					}
				}
			}
		})
	}
}

// TestPowerReadSelect: where $select is offered the power read asks for
// PowerState alone; an answer without it is checked against the whole
// document (a service dropping what was asked: $select off; a system
// without PowerState: unknown, and $select stays, one request a read).
func TestPowerReadSelect(t *testing.T) {
	for _, c := range []struct {
		name       string
		drops      bool
		noPower    bool
		want       Power
		selectLast bool // the last read still sends $select
	}{
		{"ignored", false, false, PowerOff, true},
		{"drops PowerState", true, false, PowerOff, false},
		{"no PowerState", true, true, PowerUnknown, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := healthFake(t, true)
			f.selectDrops = c.drops
			if c.noPower {
				delete(f.docs["/redfish/v1/Systems/1"], "PowerState")
			}
			conn, err := dialFake(t, f, "", "password")
			if err != nil {
				t.Fatal(err)
			}
			var last []string
			for i := 0; i < 3; i++ {
				mark := len(f.requests())
				p, err := conn.Power(testCtx(t))
				if err != nil || p != c.want {
					t.Fatalf("read %d: %q, %v; want %q", i, p, err, c.want)
				}
				last = f.requests()[mark:]
			}
			if len(last) != 1 || strings.Contains(last[0], "$select=PowerState") != c.selectLast {
				t.Errorf("last power read sent %v; want one GET, $select %v", last, c.selectLast)
			}
		})
	}
}

// TestHealthExpandMatchesPlain: on every simulator profile, with each
// health knob, a Conn using the $expand and $select the profile
// advertises reads exactly the health a Conn reading every document
// plainly reads, in no more requests (printed).
func TestHealthExpandMatchesPlain(t *testing.T) {
	ctx := testCtx(t)
	knobs := []bmcsim.HealthKnobs{{}, {PSUFailed: true}, {Overheat: true}, {DriveDegraded: true}, {NoReadings: true}}
	for _, prof := range bmcsim.Profiles() {
		sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: prof})
		addr := sim.SystemAddresses(0)[0]
		dial := func() *Conn {
			c, err := Dial(ctx, Target{Address: addr, Username: "admin", Password: "password"}, Options{Timeout: 20 * time.Second})
			if err != nil {
				t.Fatalf("%s: %v", prof, err)
			}
			t.Cleanup(func() { _ = c.Close(ctx) })
			return c
		}
		q, plain := dial(), dial()
		if err := plain.NoQueries(ctx); err != nil {
			t.Fatal(err)
		}
		var nq, np int
		for _, k := range knobs {
			if err := sim.SetKnobs(0, bmcsim.Knobs{Health: k}); err != nil {
				t.Fatal(err)
			}
			before := sim.State(0).Requests
			got, err := q.Health(ctx)
			if err != nil {
				t.Fatalf("%s %+v: %v", prof, k, err)
			}
			mid := sim.State(0).Requests
			want, err := plain.Health(ctx)
			if err != nil {
				t.Fatalf("%s %+v plain: %v", prof, k, err)
			}
			nq, np = mid-before, sim.State(0).Requests-mid
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %+v: with queries %+v %+v\nplain %+v %+v", prof, k, got.Health, got.Readings, want.Health, want.Readings)
			}
		}
		if nq > np {
			t.Errorf("%s: %d requests per health read with queries, %d without", prof, nq, np)
		}
		t.Logf("%-20s health read: %d requests (%d without $expand/$select)", prof, nq, np)
	}
}
