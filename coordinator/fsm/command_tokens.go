package fsm

import "time"

// RevokeTokenCmd deletes the token with public ID. Time (the leader's
// clock) decides which admin tokens are still valid: the last unexpired
// admin token cannot be revoked.
type RevokeTokenCmd struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
}

// TouchTokensCmd records when tokens were last used, by token ID, at
// Minute granularity. The leader batches what it saw into one command
// every Config.TouchInterval, so last use survives a failover without a
// Raft write per request. A time older than the stored one is ignored.
type TouchTokensCmd struct {
	Used map[string]time.Time `json:"used"`
}
