package api

import (
	"fmt"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// maxHealthProblem bounds one entry of status.health.problems.
const maxHealthProblem = 256

// validateHealth checks a reported status.health (nil: none).
func validateHealth(h *wire.HardwareHealth) error {
	if h == nil {
		return nil
	}
	if !oneOf(h.Health, wire.HardwareHealths) {
		return fe("status.health.health", "%q is not one of %s", h.Health, strings.Join(wire.HardwareHealths, ", "))
	}
	for k, v := range h.Components {
		if !oneOf(k, wire.HealthKinds) {
			return fe("status.health.components", "kind %q is not one of %s", k, strings.Join(wire.HealthKinds, ", "))
		}
		if !oneOf(v, wire.HardwareHealths) {
			return fe("status.health.components."+k, "%q is not one of %s", v, strings.Join(wire.HardwareHealths, ", "))
		}
	}
	if len(h.Problems) > wire.MaxHealthProblems {
		return fe("status.health.problems", "has %d entries; at most %d are allowed", len(h.Problems), wire.MaxHealthProblems)
	}
	for i, p := range h.Problems {
		if p == "" || len(p) > maxHealthProblem {
			return fe(fmt.Sprintf("status.health.problems[%d]", i), "is %d bytes long; 1 to %d are allowed", len(p), maxHealthProblem)
		}
	}
	if h.Since.IsZero() {
		return fe("status.health.since", "is required: when the agent first read this verdict")
	}
	return nil
}
