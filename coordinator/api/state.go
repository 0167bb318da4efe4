package api

import (
	"context"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// State is what the handlers read of the replicated state, as of this
// member's applied index (a handler that must answer linearizably calls
// Store.ReadBarrier first). *fsm.FSM is the implementation: a plain
// in-memory state machine that needs no Raft (fsm.NewFSM), so a test can
// hand the server one directly. Reads only: every change goes through
// Store.Apply.
type State interface {
	hostViews

	// Hosts and racks.

	// Host is one host record (false when there is none of that name).
	Host(name string) (wire.Host, bool)
	// Events is a host's events, newest last, and the applied index.
	Events(name string) ([]wire.Event, uint64, bool)
	// Racks lists every rack that has hosts or a lease.
	Racks() ([]wire.Rack, uint64)
	// ClusterID is the cluster's stable ID ("" before the first leader ran).
	ClusterID() string
	// Stopped is why this member stopped applying the log (nil: it did not).
	Stopped() *fsm.StopReason

	// Leases.

	// Lease is a rack's current lease (nil when free).
	Lease(rack string) *wire.Lease
	// LeaseHistory is a rack's lease grants, renewals and ends.
	LeaseHistory(rack string) ([]wire.LeaseRecord, uint64)

	// Tokens and credentials (the sealed form: Store reveals them).

	// Token is the token whose secret hashes to hash (fsm.HashToken).
	Token(hash string) (fsm.TokenInfo, bool)
	// TokenList lists every token.
	TokenList() ([]fsm.TokenInfo, uint64)
	// Credentials is one credentials record, its secrets sealed.
	Credentials(name string) (fsm.StoredCredentials, bool)
	// AllCredentials lists every credentials record.
	AllCredentials() ([]fsm.NamedCredentials, uint64)
	// RackUsesCredentials reports whether a host of rack names the
	// credentials (as its BMC's or as the record of its user or network data).
	RackUsesCredentials(rack, cred string) bool

	// Watches: wait for a change after an index, then answer it.

	// WaitChange waits for a change of rack after index after, or timeout.
	WaitChange(ctx context.Context, rack string, after uint64, withStatus bool, timeout <-chan time.Time) (bool, error)
	// Watch answers a rack's hosts changed after index after.
	Watch(ctx context.Context, rack string, after uint64, timeout <-chan time.Time) (wire.WatchResponse, error)
	// WatchWithoutStatus is Watch with the hosts' statuses left out.
	WatchWithoutStatus(ctx context.Context, rack string, after uint64, timeout <-chan time.Time) (wire.WatchResponse, error)
	// WaitFleetChange waits for a change of any rack after index after.
	WaitFleetChange(ctx context.Context, after uint64, timeout <-chan time.Time) (bool, error)
	// WatchFleet answers every rack's changes after index after.
	WatchFleet(ctx context.Context, after uint64, timeout <-chan time.Time) (wire.FleetWatchResponse, error)
}

// hostViews is what a paged host list reads (listviews.go).
type hostViews interface {
	// AppliedIndex is the index of the last entry this member applied.
	AppliedIndex() uint64
	// HostsView captures the hosts of rack ("" = every rack) at the
	// applied index.
	HostsView(rack string) *fsm.HostsView
}

var _ State = (*fsm.FSM)(nil)
