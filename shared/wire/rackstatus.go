package wire

// RackStatusReport is the body of POST /v1/racks/{rack}/status: every host
// of the rack whose status is due, in one request fenced once by the rack
// lease epoch. The coordinator applies it as one Raft entry.
type RackStatusReport struct {
	// Epoch is the rack lease epoch the agent holds; a stale one refuses
	// the whole report.
	Epoch uint64           `json:"epoch"`
	Hosts []RackHostReport `json:"hosts"`
}

// RackHostReport is one host of a rack status report: either a full write
// (Status, with Acks, Events or Remove as in a StatusReport) or a touch
// (Touch set, nothing else): the status is unchanged, only its epoch and
// lastUpdated are refreshed. Either may name Created.
type RackHostReport struct {
	Name string `json:"name"`
	// Touch is the host's modifiedIndex the agent's last full write was
	// answered with. The coordinator refuses the touch (conflict) when the
	// host changed since; the agent then sends the full status.
	Touch uint64 `json:"touch,omitempty"`
	// Created is the createdIndex of the host the report is about (the
	// agent's copy of the record). When set and the host's record has
	// another one (the host was deleted and created again under the same
	// name while the report was in flight), the host is refused
	// (not_found) and nothing of its report is written. 0: no check (an
	// older agent). While a voter runs a coordinator binary from before
	// the field (a rolling upgrade) the report is written without the
	// check.
	Created uint64      `json:"created,omitempty"`
	Status  *HostStatus `json:"status,omitempty"`
	Acks    []IntentAck `json:"acks,omitempty"`
	Events  []Event     `json:"events,omitempty"`
	Remove  bool        `json:"remove,omitempty"`
}

// IsTouch reports whether r refreshes an unchanged status.
func (r *RackHostReport) IsTouch() bool { return r.Touch != 0 }

// PerHost is r as the body of a per-host write (PUT
// /v1/hosts/{name}/status) under epoch: what the coordinator validates
// of r, what an agent sends for r to a coordinator without the rack
// endpoint, and what the leader writes for r while a voter applies no
// rack report. A touch or a removal without a status has the zero
// status.
func (r *RackHostReport) PerHost(epoch uint64) StatusReport {
	rep := StatusReport{Epoch: epoch, Acks: r.Acks, Events: r.Events, Remove: r.Remove}
	if r.Status != nil {
		rep.Status = *r.Status
	}
	return rep
}

// RackStatusResult answers a rack status report: one result per host, in
// the order of the request. A host refused (not in this rack, gone, a
// touch whose base moved) carries Error; the others are written.
type RackStatusResult struct {
	// Index is the Raft index of the entry that applied the report.
	Index uint64           `json:"index"`
	Hosts []RackHostResult `json:"hosts"`
}

// RackHostResult is one host's outcome.
type RackHostResult struct {
	Name string `json:"name"`
	// ModifiedIndex is the host's modifiedIndex after the write: the base
	// of the next touch.
	ModifiedIndex uint64 `json:"modifiedIndex,omitempty"`
	// Removed: the report removed the host record.
	Removed bool         `json:"removed,omitempty"`
	Error   *ErrorDetail `json:"error,omitempty"`
}
