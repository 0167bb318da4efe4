package wire

import (
	"fmt"
	"strings"
)

// The service intent (POST /v1/hosts/{name}/intents/service): a one-shot
// servicing of a provisioned host, bringing its BIOS settings and
// firmware to the spec once, without an update policy on the host.

// ServicePlan is what a service intent will do and what it costs, stated
// from the host's spec before anything starts (the coordinator fills it
// when it takes the intent; rackfencectl prints it).
type ServicePlan struct {
	// BIOS is the number of spec.bios settings (the three named switches
	// and settings) to bring about; 0: none.
	BIOS int `json:"bios,omitempty"`
	// Firmware lists spec.firmware's components, in the order flashed.
	Firmware []string `json:"firmware,omitempty"`
	// PowerCycles is the most power cycles (power-off, power-on) the
	// agent makes: 1 when a BIOS setting differs (the reset that applies
	// it), else 0. Firmware flashes cost none: power is held while one
	// runs.
	PowerCycles int `json:"powerCycles"`
	// Message says the above in a sentence.
	Message string `json:"message"`
}

// PlanService states what servicing h will do and cost, from its spec
// alone (deterministic: the coordinator's state machine calls it).
func PlanService(h *Host) ServicePlan {
	var p ServicePlan
	if b := h.BIOS; b != nil {
		for _, v := range []*bool{b.SimultaneousMultithreadingEnabled, b.SRIOVEnabled, b.VirtualizationEnabled} {
			if v != nil {
				p.BIOS++
			}
		}
		p.BIOS += len(b.Settings)
	}
	for _, c := range h.Firmware {
		p.Firmware = append(p.Firmware, c.Component)
	}
	var parts []string
	if p.BIOS > 0 {
		p.PowerCycles = 1
		parts = append(parts, fmt.Sprintf("BIOS: %d setting(s) of spec.bios, applied by 1 power cycle (hard power-off, power-on) if one differs", p.BIOS))
	}
	if len(p.Firmware) > 0 {
		parts = append(parts, fmt.Sprintf("firmware: %s flashed one after the other where not at its version, with no power change while a flash runs (an image may take effect at the host's next reboot)",
			strings.Join(p.Firmware, ", ")))
	}
	if len(parts) == 0 {
		p.Message = "nothing to service: spec.bios and spec.firmware are empty"
		return p
	}
	p.Message = fmt.Sprintf("%s; at most %d power cycle(s); RAID is not changed on a provisioned host", strings.Join(parts, "; "), p.PowerCycles)
	return p
}

// Empty: the plan has nothing to do.
func (p ServicePlan) Empty() bool { return p.BIOS == 0 && len(p.Firmware) == 0 }

// ValidateService checks the body of POST …/intents/service (a reason
// only).
func ValidateService(r *IntentRequest) error {
	if len(r.Reason) > 1024 {
		return fieldErr("reason", "is %d characters long; at most 1024 are allowed", len(r.Reason))
	}
	switch {
	case r.Mode != "":
		return fieldErr("mode", "does not apply to service")
	case r.Force:
		return fieldErr("force", "does not apply to service: a host with a BMC task running cannot be serviced; wait for the task to end")
	case r.Wipe:
		return fieldErr("wipe", "does not apply to service")
	}
	return nil
}

// ServiceableStates are the provisioning states a service intent is taken
// in.
var ServiceableStates = []string{StateProvisioned, StateExternallyProvisioned}
