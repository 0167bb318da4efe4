package fsm

import (
	"time"

	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
)

// Bounds of the FSM's per-key histories.
const (
	// MaxEvents is how many events a host keeps (oldest dropped first).
	MaxEvents = 100
	// MaxLeaseHistory is how many lease records a rack keeps.
	MaxLeaseHistory = 100
	// MaxTombstones is how many deleted host names a rack remembers for
	// watchers; a watcher further behind gets Reset.
	MaxTombstones = 1000
)

// hostRec is one host as Apply changes it: a copy of a stored entry
// (hostEntry.rec), stored as a new entry (entryOf). Entries are immutable
// once stored: every change stores a new one (copy-on-write), so
// snapshots and readers can hold a pointer without locks. Its events stay
// packed (events.go).
type hostRec struct {
	wire.Host
	Events []eventRec
}

// LeaseRec is a rack's current lease.
type LeaseRec struct {
	Holder     string        `json:"holder"`
	Epoch      uint64        `json:"epoch"`
	TTL        time.Duration `json:"ttl"`
	RenewIndex uint64        `json:"renewIndex"`
	GrantedAt  time.Time     `json:"grantedAt"`
}

func (l *LeaseRec) wire(rack string) *wire.Lease {
	if l == nil {
		return nil
	}
	return &wire.Lease{Rack: rack, Holder: l.Holder, Epoch: l.Epoch, TTL: wire.Duration(l.TTL)}
}

// credRec is one stored BMC credential. New records carry only the sealed
// password; Password is set only in records written before sealing
// (plaintext, from old logs and snapshots) until a re-encryption seals it.
type credRec struct {
	Username string       `json:"username"`
	Password string       `json:"password,omitempty"`
	Sealed   *seal.Sealed `json:"sealed,omitempty"`
	// Index is the Raft index of the record's last write (0 in records
	// from before sealing); re-sealing compares it.
	Index uint64 `json:"index,omitempty"`
	// DataKeys are the keys of the record's data map (sorted; not secret);
	// Data is the map itself (its JSON), sealed under the same key as the
	// password. Both absent in a record without data.
	DataKeys []string     `json:"dataKeys,omitempty"`
	Data     *seal.Sealed `json:"data,omitempty"`
	// A BMC account record (fsm_bmcaccount.go): its clear state and the
	// sealed pending password beside the current one (Sealed).
	BMC     *bmcAcct     `json:"bmc,omitempty"`
	Pending *seal.Sealed `json:"pending,omitempty"`
}

// TokenInfo is what a token grants, and its lifecycle. ID is public (the
// first TokenIDLen hex digits of the stored SHA-256 hash, never the secret):
// lists, revocation and the audit trail name tokens by it.
type TokenInfo struct {
	ID        string    `json:"id,omitempty"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Rack      string    `json:"rack,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// ExpiresAt zero: never expires.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
	// LastUsed is the last use the leader recorded (minute granularity).
	LastUsed time.Time `json:"lastUsed,omitzero"`
}

// Expired reports whether the token has expired at now.
func (t TokenInfo) Expired(now time.Time) bool {
	return !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt)
}

type tombstone struct {
	Name  string `json:"name"`
	Index uint64 `json:"index"`
}

// rackRec is the per-rack bookkeeping.
type rackRec struct {
	Hosts map[string]*hostEntry `json:"-"`
	Lease *LeaseRec             `json:"lease,omitempty"`
	// History of leases, oldest first, at most MaxLeaseHistory.
	History []wire.LeaseRecord `json:"history,omitempty"`
	// Index is the Raft index of the last change of anything in the rack.
	Index uint64 `json:"index"`
	// Tombs are deletions, oldest first; TombFloor is the index of the
	// newest tombstone dropped (a watcher from before it must reset).
	Tombs     []tombstone `json:"tombs,omitempty"`
	TombFloor uint64      `json:"tombFloor,omitempty"`
	// seen is the index of the last change each kind of watcher sees
	// (watch_index.go); neither snapshotted nor hashed.
	seen seenAt
}

// state is everything the FSM holds.
type state struct {
	ClusterID string
	Members   map[string]string // node ID -> HTTP URL
	Hosts     map[string]*hostEntry
	Racks     map[string]*rackRec
	Creds     map[string]credRec
	Tokens    map[string]TokenInfo // sha256 hex -> info
	// Versions is what each member's binary applies (versions.go), as
	// the leader last recorded it; a member missing here is legacy.
	Versions map[string]MemberVersion
	// tokenIDs maps a token's public ID to its hash; derived from Tokens
	// (rebuilt on restore, never snapshotted).
	tokenIDs map[string]string

	// Generation is the restore generation (epoch.go): 0 until the
	// cluster's state is first restored from a backup, bumped by every
	// restore.
	Generation uint64
}

func newState() *state {
	return &state{
		Members:  map[string]string{},
		Hosts:    map[string]*hostEntry{},
		Racks:    map[string]*rackRec{},
		Creds:    map[string]credRec{},
		Tokens:   map[string]TokenInfo{},
		Versions: map[string]MemberVersion{},

		tokenIDs: map[string]string{},
	}
}

func (s *state) rack(name string) *rackRec {
	r := s.Racks[name]
	if r == nil {
		r = &rackRec{Hosts: map[string]*hostEntry{}}
		s.Racks[name] = r
	}
	return r
}

// dropRackIfEmpty forgets a rack with no hosts, no lease and no history.
func (s *state) dropRackIfEmpty(name string) {
	r := s.Racks[name]
	if r != nil && len(r.Hosts) == 0 && r.Lease == nil && len(r.History) == 0 && len(r.Tombs) == 0 {
		delete(s.Racks, name)
	}
}
