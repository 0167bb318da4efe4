package wire

// SecretsStatus is GET /v1/secrets (admin): which keys this member holds
// and how many credentials each seals. Never key material.
type SecretsStatus struct {
	// NodeID is the member that answered (key files are per member).
	NodeID string `json:"nodeID"`
	// KeyFile is that member's --secrets-key-file.
	KeyFile string `json:"keyFile"`
	// Primary is the key new credentials are sealed under ("" when the
	// member has no key file).
	Primary string `json:"primary"`
	// Keys lists the member's keys (file order, primary last), then keys
	// that seal credentials but are missing from the member's key file.
	Keys []SecretsKey `json:"keys"`
	// Credentials is the number of credentials records.
	Credentials int `json:"credentials"`
	// Plaintext counts records written before sealing existed and not
	// re-encrypted since (POST /v1/secrets/reencrypt seals them).
	Plaintext int `json:"plaintext"`
	// Index is the Raft index the counts reflect.
	Index uint64 `json:"index"`
}

// SecretsKey is one key of SecretsStatus.
type SecretsKey struct {
	ID string `json:"id"`
	// Primary marks the key new credentials are sealed under.
	Primary bool `json:"primary,omitempty"`
	// Loaded is false for a key that seals credentials but is not in the
	// answering member's key file: those credentials cannot be revealed
	// there until it is added.
	Loaded bool `json:"loaded"`
	// Credentials is how many records this key seals.
	Credentials int `json:"credentials"`
}

// ReencryptResult is the answer of POST /v1/secrets/reencrypt (admin).
type ReencryptResult struct {
	// Primary is the key every record is now sealed under.
	Primary string `json:"primary"`
	// Resealed counts records re-sealed under Primary (including legacy
	// plaintext ones sealed for the first time).
	Resealed int `json:"resealed"`
	// Unchanged counts records that were already sealed under Primary.
	Unchanged int `json:"unchanged"`
	// Skipped counts records written by a PUT during the run (a PUT
	// always seals under the primary key, so nothing is left to do).
	Skipped int `json:"skipped"`
	// Failed lists records that could not be re-sealed, with why.
	Failed []ReencryptFailure `json:"failed,omitempty"`
	// Index is the Raft index after the last write.
	Index uint64 `json:"index"`
}

// ReencryptFailure is one record POST /v1/secrets/reencrypt could not seal.
type ReencryptFailure struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

// SnapshotResult is the answer of POST /v1/cluster/snapshot (admin).
type SnapshotResult struct {
	NodeID string `json:"nodeID"`
	// Index is the last Raft index the snapshot includes.
	Index uint64 `json:"index"`
	// Took is how long taking and persisting it lasted.
	Took Duration `json:"took"`
}
