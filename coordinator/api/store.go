package api

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// Store is what the handlers need of a coordinator member besides the
// reads of its state (State): who it is and who leads, the writes and the
// read barrier that go through Raft, membership, and the secrets it seals
// (rqlite's http.Store habit: the interface lives with its consumer and
// lists only the methods called). *coordinator.Store is the
// implementation; a test can wrap it to inject a fault the real store
// cannot produce on demand (store_test.go).
type Store interface {
	// Identity and leadership of this member.

	// NodeID is this member's Raft server ID.
	NodeID() string
	// HTTPURL is this member's advertised API URL.
	HTTPURL() string
	// DataDir is this member's data directory (default audit file place).
	DataDir() string
	// IsLeader reports whether this member leads right now.
	IsLeader() bool
	// Leader is the leader's ID and API URL ("" when none is known).
	Leader() (id, httpURL string)
	// Health is GET /v1/health's answer (version, state hashes, stop).
	Health() wire.Health

	// Through Raft: writes and linearizable reads.

	// Apply submits one command on the leader: its result or refusal
	// (*fsm.Error), coordinator.ErrNotLeader when nothing was
	// submitted, coordinator.ErrOutcomeUnknown when it may have applied.
	Apply(ctx context.Context, c fsm.Command) (any, error)
	// ApplyRackStatus applies a rack status report as one entry, or as
	// per-host commands while a voter does not apply the rack command.
	ApplyRackStatus(ctx context.Context, c fsm.RackStatusCmd) (wire.RackStatusResult, error)
	// ReadBarrier makes the next State read linearizable (leader only).
	ReadBarrier(ctx context.Context) error
	// LeaseTimeLeft is how long a rack's lease has left on the leader's
	// clock (false when it has none).
	LeaseTimeLeft(rack string) (time.Duration, bool)
	// NoteTokenUse records a token's last use (batched, best effort).
	NoteTokenUse(id string, at time.Time)

	// Cluster membership and maintenance.

	// Members lists the Raft servers with their API URLs.
	Members() ([]wire.Member, error)
	// Status is GET /v1/status's answer.
	Status() wire.ClusterStatus
	// Join adds a voter (leader only).
	Join(ctx context.Context, req wire.JoinRequest) error
	// RemoveMember removes a server from the configuration (leader only).
	RemoveMember(ctx context.Context, id string) error
	// Snapshot takes a Raft snapshot of this member now.
	Snapshot() (index uint64, took time.Duration, err error)
	// Backup writes a backup file of the leader's state to w (leader
	// only; tier goes into its header).
	Backup(w io.Writer, tier string) (coordinator.BackupHeader, error)

	// Secrets: sealing BMC passwords under this member's keys.

	// RevealPassword opens a stored password.
	RevealPassword(name string, c fsm.StoredCredentials) (string, error)
	// SealCredentialsData seals a password and a data map (may be empty).
	SealCredentialsData(name, username, password string, data map[string]string) (fsm.PutSealedCredentialsCmd, error)
	// RevealData opens a stored data map (nil when the record has none).
	RevealData(name string, c fsm.StoredCredentials) (map[string]string, error)
	// SecretsStatus lists this member's keys and what each seals.
	SecretsStatus() wire.SecretsStatus
	// Reencrypt re-seals every credential under the primary key.
	Reencrypt(ctx context.Context) (wire.ReencryptResult, error)
}

var _ Store = (*coordinator.Store)(nil)

// stateOf is the state machine of st, for a Config without State: the one
// place the API reaches the concrete FSM (coordinator.Store.FSM). A Store
// that is not a *coordinator.Store (a test's wrapper) comes with its State.
func stateOf(st Store) State {
	if cs, ok := st.(*coordinator.Store); ok {
		return cs.FSM()
	}
	panic(fmt.Sprintf("api.Config: State is nil and Store is a %T, not a *coordinator.Store: set Config.State to the state machine the reads answer from", st))
}
