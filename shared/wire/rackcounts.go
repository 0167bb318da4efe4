package wire

// RackHostCounts counts a rack's hosts for GET /v1/racks: what a fleet
// view paints before (or instead of) reading every host.
type RackHostCounts struct {
	// States counts the hosts by provisioning state; "none" is a host
	// its rack agent has not reported yet.
	States map[string]int `json:"states"`
	// Statuses counts the hosts by operational status; "none" as in
	// States.
	Statuses map[string]int `json:"statuses"`
	// Unacknowledged counts the hosts with an intent (detach, drain,
	// resume, reboot, inspect, service or a power-off hold) their rack
	// agent has not acknowledged yet.
	Unacknowledged int `json:"unacknowledged"`
}

// CountHost adds h to c.
func (c *RackHostCounts) CountHost(h *Host) {
	state, status := "none", "none"
	if s := h.Status; s != nil {
		if s.ProvisioningState != "" {
			state = s.ProvisioningState
		}
		if s.OperationalStatus != "" {
			status = s.OperationalStatus
		}
	}
	if c.States == nil {
		c.States, c.Statuses = map[string]int{}, map[string]int{}
	}
	c.States[state]++
	c.Statuses[status]++
	if h.Intents.Unacknowledged() {
		c.Unacknowledged++
	}
}

// Unacknowledged reports whether any of i's detach, drain, resume,
// reboot, inspect, service or power-off intents waits for its rack
// agent's acknowledgement.
func (i *Intents) Unacknowledged() bool {
	if i == nil {
		return false
	}
	for _, x := range []*Intent{i.Detach, i.Drain, i.Resume, i.Reboot, i.Inspect, i.Service} {
		if x != nil && !x.Acknowledged {
			return true
		}
	}
	for _, x := range i.PowerOff {
		if x != nil && !x.Acknowledged {
			return true
		}
	}
	return false
}
