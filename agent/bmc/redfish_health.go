package bmc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/wire"
)

// Hardware health (Redfish): Status.Health/HealthRollup of the system, its
// first chassis and its storage subsystems, and the chassis' sensors: the
// legacy Thermal (Temperatures, Fans) and Power (PowerSupplies) resources,
// or ThermalSubsystem (Fans, ThermalMetrics) and PowerSubsystem
// (PowerSupplies) where the chassis has no legacy ones. A sensor that
// reports no reading and no health is Unknown, never OK; an Absent
// component is skipped.
//
// Where the service offers them (redfish_query.go), the system is read
// with $select of what health needs, and the chassis (its sensors'
// resources inline), the subsystems and the collections with $expand: one
// request each instead of one per member.

// HealthReading is one sensor reading of a health read, for metrics.
type HealthReading struct {
	// Kind is wire.HealthTemperature or wire.HealthFan.
	Kind string
	Name string
	// Value is °C for a temperature, the BMC's unit (RPM or percent) for
	// a fan.
	Value float64
}

// HealthRead is what one health read found.
type HealthRead struct {
	Health   *wire.HardwareHealth
	Readings []HealthReading
}

type rfStatus struct {
	State, Health, HealthRollup string
}

// rfHealthSystem is what health reads of the system. Storage carries the
// storage collection inline when the document was read expanded
// (inventory's), so its members' health needs no read of its own.
type rfHealthSystem struct {
	Status  rfStatus
	Storage rfMember
	Links   struct{ Chassis []rfLink }
}

type rfHealthChassis struct {
	Status                                    rfStatus
	Thermal, Power                            rfMember
	ThermalSubsystem, PowerSubsystem, Sensors rfMember
}

type rfThermal struct {
	Temperatures []struct {
		Name                                              string
		ReadingCelsius                                    *float64
		UpperThresholdNonCritical, UpperThresholdCritical *float64
		UpperThresholdFatal                               *float64
		Status                                            rfStatus
	}
	Fans []struct {
		Name, FanName string
		Reading       *float64
		Status        rfStatus
	}
}

type rfPower struct {
	PowerSupplies []struct {
		Name   string
		Status rfStatus
	}
}

type rfSubsystem struct {
	Fans, PowerSupplies, ThermalMetrics rfMember
}

// chassisLevels: the chassis' sensor resources (1), the subsystems'
// collections (2) and their members (3) in one read. A chassis found with
// the legacy Thermal and Power is read one level deep afterwards
// (rfDiscovery.chassisDepth): the deeper levels would carry only what
// health does not read (network adapters and their ports, on most BMCs).
const chassisLevels = 3

// legacyOnly: what health reads of ch is its Status and the legacy
// Thermal and Power (a kind the chassis lacks needs nothing).
func (ch *rfHealthChassis) legacyOnly() bool {
	return (ch.Thermal.ID != "" || ch.ThermalSubsystem.ID == "") && (ch.Power.ID != "" || ch.PowerSubsystem.ID == "")
}

type rfNamedStatus struct {
	Name         string
	Status       rfStatus
	SpeedPercent *struct{ Reading *float64 }
}

type rfThermalMetrics struct {
	TemperatureReadingsCelsius []struct {
		DeviceName    string
		Reading       *float64
		DataSourceUri string //nolint:revive // the Redfish property
	}
}

// rfSensor is a Sensor resource: its health and thresholds judge the
// ThermalMetrics reading that names it.
type rfSensor struct {
	Reading    *float64
	Status     rfStatus
	Thresholds struct {
		UpperCaution, UpperCritical, UpperFatal *struct{ Reading *float64 }
	}
}

func threshold(t *struct{ Reading *float64 }) *float64 {
	if t == nil {
		return nil
	}
	return t.Reading
}

// healthAcc gathers components' health.
type healthAcc struct {
	mu       sync.Mutex
	kinds    map[string]string
	problems []problem
	readings []HealthReading
}

type problem struct {
	rank int
	text string
}

func (a *healthAcc) add(kind, name, health string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kinds == nil {
		a.kinds = map[string]string{}
	}
	if cur, ok := a.kinds[kind]; !ok || wire.HealthRank(health) > wire.HealthRank(cur) {
		a.kinds[kind] = health
	}
	if health != wire.HardwareOK {
		a.problems = append(a.problems, problem{wire.HealthRank(health), kindNames[kind] + " " + name + ": " + health})
	}
}

func (a *healthAcc) reading(kind, name string, v float64) {
	a.mu.Lock()
	a.readings = append(a.readings, HealthReading{Kind: kind, Name: name, Value: v})
	a.mu.Unlock()
}

var kindNames = map[string]string{wire.HealthSystem: "system", wire.HealthChassis: "chassis", wire.HealthTemperature: "temperature",
	wire.HealthFan: "fan", wire.HealthPowerSupply: "power supply", wire.HealthStorage: "storage"}

// statusHealth is a component's health from its Status: the rollup when
// rollup is asked for and given, else Health; "" for an Absent component
// (skipped); Unknown when it states none.
func statusHealth(s rfStatus, rollup bool) string {
	if s.State == "Absent" {
		return ""
	}
	h := s.Health
	if rollup && s.HealthRollup != "" {
		h = wire.WorseHealth(normHealth(s.Health), normHealth(s.HealthRollup))
	}
	return normHealth(h)
}

func normHealth(h string) string {
	switch strings.ToLower(h) {
	case "ok":
		return wire.HardwareOK
	case "warning":
		return wire.HardwareWarning
	case "critical":
		return wire.HardwareCritical
	}
	return wire.HardwareUnknown
}

// sensorHealth is a sensor's health: its Status.Health when it states
// one (an Absent sensor: ""), else from its reading against its
// thresholds; no reading and no health is Unknown.
func sensorHealth(s rfStatus, reading *float64, warn, crit, fatal *float64) string {
	if s.State == "Absent" {
		return ""
	}
	if s.Health != "" {
		return normHealth(s.Health)
	}
	if reading == nil {
		return wire.HardwareUnknown
	}
	switch v := *reading; {
	case fatal != nil && v >= *fatal, crit != nil && v >= *crit:
		return wire.HardwareCritical
	case warn != nil && v >= *warn:
		return wire.HardwareWarning
	}
	return wire.HardwareOK
}

// Health reads the host's hardware health (Redfish only; IPMI:
// errclass.ErrUnsupported). Requests: the system, its first chassis, the chassis'
// Thermal and Power (or its subsystems' collections), the storage
// collection and its members; the independent ones in parallel. With
// $expand offered, what an answer carries inline is not read again: 3
// requests (system, chassis, storage) where the service expands 3 levels,
// 1 (chassis) right after an inspection that read the system expanded
// (healthSystem).
func (c *Conn) Health(ctx context.Context) (HealthRead, error) {
	if c.proto != "redfish" {
		return HealthRead{}, fmt.Errorf("%w: %s: IPMI reports no hardware health through rackfence", errclass.ErrUnsupported, c.addr)
	}
	var out HealthRead
	err := c.rfCall(ctx, "health", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err != nil {
			return err
		}
		sys, err := c.healthSystem(s, d)
		if err != nil {
			return err
		}
		a := &healthAcc{}
		if h := statusHealth(sys.Status, true); h != "" {
			a.add(wire.HealthSystem, short(d.system), h)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		if len(sys.Links.Chassis) > 0 {
			wg.Add(1)
			go func() { defer wg.Done(); errs[0] = c.chassisHealth(s, d, sys.Links.Chassis[0].ID, a) }()
		}
		if sys.Storage.ID != "" {
			wg.Add(1)
			go func() { defer wg.Done(); errs[1] = c.storageHealth(s, d, sys.Storage, a) }()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		out = a.result()
		return nil
	})
	return out, err
}

// healthSystem is the system as health reads it: the document discovery
// or inventory read on this Conn within inventoryReuse when there is one
// (a host's first health read follows its registration and inspection:
// one GET less, and with inventory's expanded document the storage
// collection inline), else the system with $select where offered.
func (c *Conn) healthSystem(s *rfSession, d *rfDiscovery) (*rfHealthSystem, error) {
	if sys := c.healthSys.take(); sys != nil {
		return sys, nil
	}
	var sys rfHealthSystem
	if err := c.getSelected(s, d, d.system, []string{"Status", "Storage", "Links"}, &sys); err != nil {
		return nil, err
	}
	return &sys, nil
}

func (a *healthAcc) result() HealthRead {
	h := &wire.HardwareHealth{Health: wire.HardwareOK, Components: a.kinds}
	for _, k := range a.kinds {
		h.Health = wire.WorseHealth(h.Health, k)
	}
	if len(a.kinds) == 0 {
		h.Health = wire.HardwareUnknown // the BMC reports nothing
	}
	sort.SliceStable(a.problems, func(i, j int) bool {
		if a.problems[i].rank != a.problems[j].rank {
			return a.problems[i].rank > a.problems[j].rank
		}
		return a.problems[i].text < a.problems[j].text
	})
	for i, p := range a.problems {
		if i == wire.MaxHealthProblems {
			break
		}
		h.Problems = append(h.Problems, p.text)
	}
	slices.SortFunc(a.readings, func(x, y HealthReading) int { return strings.Compare(x.Kind+x.Name, y.Kind+y.Name) })
	return HealthRead{Health: h, Readings: a.readings}
}

// chassisHealth reads the chassis and its sensors.
func (c *Conn) chassisHealth(s *rfSession, d *rfDiscovery, path string, a *healthAcc) error {
	var ch rfHealthChassis
	levels := int(d.chassisDepth.Load())
	if levels == 0 {
		levels = chassisLevels
	}
	if err := c.getExpanded(s, d, path, levels, &ch); err != nil {
		return err
	}
	if ch.legacyOnly() {
		d.chassisDepth.Store(1)
	} else {
		d.chassisDepth.Store(chassisLevels)
	}
	if h := statusHealth(ch.Status, true); h != "" {
		a.add(wire.HealthChassis, short(path), h)
	}
	var thermal, power func() error
	switch {
	case ch.Thermal.ID != "":
		thermal = func() error { return legacyThermal(s, ch.Thermal, a) }
	case ch.ThermalSubsystem.ID != "":
		thermal = func() error { return c.thermalSubsystem(s, d, ch.ThermalSubsystem, inlineSensors(ch.Sensors), a) }
	}
	switch {
	case ch.Power.ID != "":
		power = func() error { return legacyPower(s, ch.Power, a) }
	case ch.PowerSubsystem.ID != "":
		power = func() error { return c.powerSubsystem(s, d, ch.PowerSubsystem, a) }
	}
	return parallel(thermal, power)
}

// parallel runs the non-nil fns at once; the first error.
func parallel(fns ...func() error) error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		if fn == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn() }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func legacyThermal(s *rfSession, m rfMember, a *healthAcc) error {
	var t rfThermal
	if err := load(s, m, &t); err != nil {
		return ignoreMissing(err)
	}
	for _, x := range t.Temperatures {
		if h := sensorHealth(x.Status, x.ReadingCelsius, x.UpperThresholdNonCritical, x.UpperThresholdCritical, x.UpperThresholdFatal); h != "" {
			a.add(wire.HealthTemperature, x.Name, h)
		}
		if x.ReadingCelsius != nil {
			a.reading(wire.HealthTemperature, x.Name, *x.ReadingCelsius)
		}
	}
	for _, f := range t.Fans {
		name := f.Name
		if name == "" {
			name = f.FanName
		}
		if h := sensorHealth(f.Status, f.Reading, nil, nil, nil); h != "" {
			a.add(wire.HealthFan, name, h)
		}
		if f.Reading != nil {
			a.reading(wire.HealthFan, name, *f.Reading)
		}
	}
	return nil
}

func legacyPower(s *rfSession, m rfMember, a *healthAcc) error {
	var p rfPower
	if err := load(s, m, &p); err != nil {
		return ignoreMissing(err)
	}
	for _, ps := range p.PowerSupplies {
		if h := statusHealth(ps.Status, false); h != "" {
			a.add(wire.HealthPowerSupply, ps.Name, h)
		}
	}
	return nil
}

// inlineSensors are the chassis' Sensors its expanded answer carried
// inline, by path (nil when none).
func inlineSensors(col rfMember) map[string]rfMember {
	var sc rfCountedCollection
	if col.raw == nil || json.Unmarshal(col.raw, &sc) != nil {
		return nil
	}
	out := map[string]rfMember{}
	for _, m := range sc.Members {
		if m.raw != nil {
			out[m.ID] = m
		}
	}
	return out
}

// thermalSubsystem reads fans and temperatures; a temperature whose
// DataSourceUri names a Sensor is judged by that Sensor's health and
// thresholds (from the chassis' expanded Sensors, else one GET each), as
// ThermalMetrics carries readings alone.
func (c *Conn) thermalSubsystem(s *rfSession, d *rfDiscovery, m rfMember, sensors map[string]rfMember, a *healthAcc) error {
	var sub rfSubsystem
	if err := c.loadExpanded(s, d, m, 2, &sub); err != nil {
		return ignoreMissing(err)
	}
	fans := func() error {
		return c.eachMember(s, d, sub.Fans, func(m rfNamedStatus) {
			var r *float64
			if m.SpeedPercent != nil {
				r = m.SpeedPercent.Reading
			}
			if h := sensorHealth(m.Status, r, nil, nil, nil); h != "" {
				a.add(wire.HealthFan, m.Name, h)
			}
			if r != nil {
				a.reading(wire.HealthFan, m.Name, *r)
			}
		})
	}
	temps := func() error {
		if sub.ThermalMetrics.ID == "" {
			return nil
		}
		var tm rfThermalMetrics
		if err := load(s, sub.ThermalMetrics, &tm); err != nil {
			return ignoreMissing(err)
		}
		for _, t := range tm.TemperatureReadingsCelsius {
			var sn rfSensor
			if src := strings.TrimSuffix(t.DataSourceUri, "/"); src != "" {
				sm, ok := sensors[src]
				if !ok {
					sm = rfMember{ID: src}
				}
				if err := load(s, sm, &sn); err != nil && !isNotFound(err) {
					return err
				}
			}
			if t.Reading != nil {
				a.reading(wire.HealthTemperature, t.DeviceName, *t.Reading)
			}
			h := sensorHealth(sn.Status, t.Reading, threshold(sn.Thresholds.UpperCaution), threshold(sn.Thresholds.UpperCritical),
				threshold(sn.Thresholds.UpperFatal))
			if h != "" {
				a.add(wire.HealthTemperature, t.DeviceName, h)
			}
		}
		return nil
	}
	return parallel(fans, temps)
}

func (c *Conn) powerSubsystem(s *rfSession, d *rfDiscovery, m rfMember, a *healthAcc) error {
	var sub rfSubsystem
	if err := c.loadExpanded(s, d, m, 2, &sub); err != nil {
		return ignoreMissing(err)
	}
	return c.eachMember(s, d, sub.PowerSupplies, func(m rfNamedStatus) {
		if h := statusHealth(m.Status, false); h != "" {
			a.add(wire.HealthPowerSupply, m.Name, h)
		}
	})
}

func (c *Conn) storageHealth(s *rfSession, d *rfDiscovery, col rfMember, a *healthAcc) error {
	return c.eachMember(s, d, col, func(m rfNamedStatus) {
		if h := statusHealth(m.Status, true); h != "" {
			a.add(wire.HealthStorage, m.Name, h)
		}
	})
}

// eachMember reads a collection (expanded where offered) and its members
// not inline, in parallel, and calls fn for each, in the collection's
// order; a missing collection or member is skipped. An answer listing
// fewer members than its Members@odata.count is read again plainly.
func (c *Conn) eachMember(s *rfSession, d *rfDiscovery, link rfMember, fn func(rfNamedStatus)) error {
	if link.ID == "" {
		return nil
	}
	var col rfCountedCollection
	if err := c.loadExpanded(s, d, link, 1, &col); err != nil {
		return ignoreMissing(err)
	}
	if col.Count != nil && *col.Count > len(col.Members) {
		col = rfCountedCollection{}
		if err := rfGet(s.api, link.ID, &col); err != nil {
			return ignoreMissing(err)
		}
	}
	ms := make([]rfNamedStatus, len(col.Members))
	errs := make([]error, len(col.Members))
	var wg sync.WaitGroup
	for i, m := range col.Members {
		if m.raw != nil {
			errs[i] = load(s, m, &ms[i])
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = rfGet(s.api, m.ID, &ms[i]) }()
	}
	wg.Wait()
	for i := range ms {
		if errs[i] != nil {
			if isNotFound(errs[i]) {
				continue
			}
			return errs[i]
		}
		if ms[i].Name == "" {
			ms[i].Name = short(col.Members[i].ID)
		}
		fn(ms[i])
	}
	return nil
}

// rfCountedCollection is a collection with its member count.
type rfCountedCollection struct {
	Members []rfMember
	Count   *int `json:"Members@odata.count"`
}

// ignoreMissing: a link to nothing (404) has no health to read.
func ignoreMissing(err error) error {
	if isNotFound(err) {
		return nil
	}
	return err
}
