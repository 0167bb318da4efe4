package wire

// Rolling upgrades: the version gate and the state hash check.

// Health answers GET /v1/health (no token): 200 with status "ok" while
// the member serves, 503 with status "stopped" once it stopped applying
// the Raft log (Stopped says why), 503 with status "log_write_failing"
// while it cannot write its Raft log (Reason names the data dir and the
// error). Members read each other's health to learn their versions,
// state hashes and how far they applied the log.
type Health struct {
	Status string `json:"status"`
	Node   string `json:"node"`
	State  string `json:"state"`
	// Reason says why Status is not "ok" (log_write_failing: the data
	// dir, the error and what to do).
	Reason string `json:"reason,omitempty"`
	// AppliedIndex is the last Raft log index this member applied; the
	// leader compares it with its own (rackfence_member_applied_index_lag).
	AppliedIndex uint64 `json:"appliedIndex,omitempty"`
	// Version is the binary's version; Commands the command types it
	// applies (decimal type → newest body version).
	Version  string         `json:"version,omitempty"`
	Commands map[string]int `json:"commands,omitempty"`
	// Stopped is the log entry this member cannot apply, when it stopped.
	Stopped *StopInfo `json:"stopped,omitempty"`
	// StateHashes are the member's recent FSM state hashes, oldest first.
	StateHashes []StateHash `json:"stateHashes,omitempty"`
}

// Health statuses.
const (
	HealthOK              = "ok"
	HealthStopped         = "stopped"
	HealthLogWriteFailing = "log_write_failing"
)

// StopInfo names the log entry a member stopped at.
type StopInfo struct {
	Index   uint64 `json:"index"`
	Type    uint8  `json:"type"`
	Version uint8  `json:"version"`
	Message string `json:"message"`
}

// StateHash is a member's FSM state hash (SHA-256, hex) after applying log
// entry Index. Members hash at the same indexes; equal state, equal sum.
type StateHash struct {
	Index uint64 `json:"index"`
	Sum   string `json:"sum"`
}

// UpgradeStatus is the version gate as the leader sees it.
type UpgradeStatus struct {
	// EffectiveVersion is the binary version of the voter that applies the
	// fewest command types: the cluster writes only what it applies.
	EffectiveVersion string `json:"effectiveVersion"`
	// Lagging lists voters that do not apply every command this leader's
	// binary can write, each with the "type/version" pairs it lacks.
	Lagging []LaggingMember `json:"lagging,omitempty"`
	// HashCheck is the last comparison of members' state hashes.
	HashCheck *HashCheck `json:"hashCheck,omitempty"`
}

// LaggingMember is a voter whose binary is older than the leader's.
type LaggingMember struct {
	ID      string   `json:"id"`
	Version string   `json:"version"`
	Missing []string `json:"missing"`
}

// HashCheck is one comparison of the members' state hashes at one index.
type HashCheck struct {
	// Index is the log index compared (0: no common index yet).
	Index uint64 `json:"index"`
	// At is when the leader compared (RFC 3339).
	At string `json:"at"`
	// Matching lists members whose hash equals the leader's at Index;
	// Mismatched those whose hash differs; Unknown those that reported no
	// hash at Index (an older binary, unreachable, or not there yet).
	Matching   []string `json:"matching,omitempty"`
	Mismatched []string `json:"mismatched,omitempty"`
	Unknown    []string `json:"unknown,omitempty"`
}
