package agent

import (
	"context"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// Coordinator is everything the agent asks of the coordinator's API. In
// production it is a *client.Client (several member URLs, failover,
// retries of 503); tests use the same client against an in-process
// coordinator (testkit/coordtest), or a hand-written fake for the
// faults a real coordinator cannot produce on demand.
//
// Errors must be what shared/client returns, because the agent decides by
// them: a *client.Error for an answer of the coordinator (client.IsConflict,
// IsStaleEpoch, IsNotFound, IsUnauthorized, IsForbidden, IsNoLeader), an
// error wrapping client.ErrUnreachable when no member answered, and the
// context's error when ctx ended.
type Coordinator interface {
	LeaseAPI
	CredentialsRevealer
	// Watch long-polls the rack for changes after index, answering after
	// timeout with nothing changed (GET /v1/watch).
	Watch(ctx context.Context, rack string, index uint64, timeout time.Duration) (*wire.WatchResponse, error)
	// WatchWithoutStatus is Watch with status=false: hosts without their
	// status, StatusOmitted naming those that have one; a coordinator
	// older than the parameter answers as Watch does.
	WatchWithoutStatus(ctx context.Context, rack string, index uint64, timeout time.Duration) (*wire.WatchResponse, error)
	// ReportStatus writes a host's status, acks and events under r.Epoch;
	// a stale epoch is refused with a 409 stale_epoch.
	ReportStatus(ctx context.Context, name string, r wire.StatusReport) error
}

// LeaseAPI is what the lease keeper needs: the rack lease's three calls.
type LeaseAPI interface {
	// AcquireLease asks for the rack lease; 409 while another holder has it.
	AcquireLease(ctx context.Context, rack string, r wire.LeaseRequest) (*wire.Lease, error)
	// RenewLease extends the lease of r.Epoch; 409 or 404 when it is gone.
	RenewLease(ctx context.Context, rack string, r wire.LeaseRequest) (*wire.Lease, error)
	// ReleaseLease gives the lease of r.Epoch back so a standby takes over.
	ReleaseLease(ctx context.Context, rack string, r wire.LeaseRequest) error
}

// CredentialsRevealer is what the credentials cache needs.
type CredentialsRevealer interface {
	// RevealCredentials reads a credentials record with its password
	// (GET /v1/credentials/{name}?reveal=true).
	RevealCredentials(ctx context.Context, name string) (*wire.Credentials, error)
}
