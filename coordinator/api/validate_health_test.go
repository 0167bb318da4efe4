package api

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// A status's hardware health: a verdict is accepted; an unknown health or
// kind, too many or too long problems and no since are refused naming the
// field.
func TestValidateReportHealth(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ok := func() wire.HardwareHealth {
		return wire.HardwareHealth{Health: wire.HardwareCritical, Since: t0,
			Components: map[string]string{wire.HealthPowerSupply: wire.HardwareCritical, wire.HealthSystem: wire.HardwareOK},
			Problems:   []string{"power supply PSU 1: Critical"}}
	}
	for _, c := range []struct {
		mod   func(h *wire.HardwareHealth)
		field string // "" accepted
	}{
		{func(h *wire.HardwareHealth) {}, ""},
		{func(h *wire.HardwareHealth) { h.Components, h.Problems, h.Health = nil, nil, wire.HardwareUnknown }, ""},
		{func(h *wire.HardwareHealth) { h.Health = "healthy" }, "status.health.health"},
		{func(h *wire.HardwareHealth) { h.Components["gpu"] = wire.HardwareOK }, "status.health.components"},
		{func(h *wire.HardwareHealth) { h.Components[wire.HealthFan] = "ok" }, "status.health.components.fan"},
		{func(h *wire.HardwareHealth) { h.Problems = make([]string, wire.MaxHealthProblems+1) }, "status.health.problems"},
		{func(h *wire.HardwareHealth) { h.Problems = []string{strings.Repeat("x", 300)} }, "status.health.problems[0]"},
		{func(h *wire.HardwareHealth) { h.Since = time.Time{} }, "status.health.since"},
	} {
		hh := ok()
		c.mod(&hh)
		err := validateReport(&wire.StatusReport{Epoch: 1, Status: wire.HostStatus{ProvisioningState: wire.StateAvailable, Health: &hh}})
		if c.field == "" {
			if err != nil {
				t.Errorf("%+v refused: %v", hh, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v accepted, want a refusal of %s", hh, c.field)
		} else if d := refusal(err); d.Field != c.field || d.Code != wire.CodeBadRequest {
			t.Errorf("%+v: %v, want a refusal of %s", hh, err, c.field)
		}
	}
}
