package wire

// PivotRequest is the body of POST /v1/hosts/{name}/pivot on the source
// tier: move the host to tier To without a redeploy.
type PivotRequest struct {
	To string `json:"to"`
	// DeleteSource deletes the source's detached record once the
	// destination took the host (default: keep it, marked pivotedTo).
	DeleteSource bool `json:"deleteSource,omitempty"`
}

// Pivot phases, in order.
const (
	PivotDetaching = "detaching"  // detach recorded, waiting for the lease holder's ack
	PivotDetached  = "detached"   // acknowledged; not yet created in the destination
	PivotHandedOff = "handed-off" // destination created it and confirmed the handoff
	PivotAdopted   = "adopted"    // destination's agent manages it
)

// PivotProgress answers a pivot step: where this host is. Message says
// why it stopped there (e.g. the destination is unreachable) and what to do.
type PivotProgress struct {
	Host  string `json:"host"`
	To    string `json:"to"`
	Phase string `json:"phase"`
	// DetachIndex is the source's createdIndex of the pivot's detach.
	DetachIndex uint64 `json:"detachIndex,omitempty"`
	// Destination is the host's state in the destination tier, when known.
	DestinationState  string `json:"destinationState,omitempty"`
	DestinationStatus string `json:"destinationStatus,omitempty"`
	Message           string `json:"message,omitempty"`
	Done              bool   `json:"done"`
}
