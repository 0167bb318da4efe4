package provisioner

import "context"

// EventSubscription is what the agent asks a host's BMC to push events
// with (agent/events*.go).
type EventSubscription struct {
	// Destination is the https:// URL of the agent's event listener for
	// this host.
	Destination string
	// Owner prefixes the Context of every subscription the tier makes;
	// Context is this one's.
	Owner, Context string
	// Headers are sent by the BMC with every event (the secret).
	Headers map[string]string
}

// EventSubscriber is implemented by a provisioner that can subscribe a
// host's BMC to push events (the direct provisioner over Redfish). Every
// call changes the BMC and goes through the guard. errclass.ErrUnsupported:
// the BMC has no (enabled) EventService; the agent polls it.
type EventSubscriber interface {
	// ArmEvents replaces the owner's subscriptions on the host's BMC by
	// sub.
	ArmEvents(ctx context.Context, h Host, sub EventSubscription) (EventArmed, error)
	// DisarmEvents deletes the owner's subscriptions on the host's BMC.
	DisarmEvents(ctx context.Context, h Host, owner string) (int, error)
	// EventSubscribed reports whether the BMC still lists path (read-only).
	EventSubscribed(ctx context.Context, h Host, path string) (bool, error)
	// SubmitTestEvent asks the BMC to send its subscriptions a test
	// event; target is EventArmed.TestTarget ("": found anew).
	SubmitTestEvent(ctx context.Context, h Host, target string) error
}

// EventArmed is what ArmEvents did.
type EventArmed struct {
	// Path is the subscription's resource on the BMC.
	Path string
	// TestTarget is the BMC's SubmitTestEvent action ("" when none).
	TestTarget string
	// Replaced counts the owner's earlier subscriptions it deleted.
	Replaced int
}
