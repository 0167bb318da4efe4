package fsm

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// CmdType is the first byte of every Raft log entry the coordinator writes.
// The second byte is the body's format version (codec.go: 1 JSON, 2
// MessagePack for the hot-path commands); the rest is the body.
type CmdType uint8

// Command types. Never renumber: they are in every stored log.
const (
	CmdInit           CmdType = 1
	CmdPutHost        CmdType = 2
	CmdDeleteHost     CmdType = 3
	CmdPutIntent      CmdType = 4
	CmdDeleteIntent   CmdType = 5
	CmdStatus         CmdType = 6
	CmdLeaseAcquire   CmdType = 7
	CmdLeaseRenew     CmdType = 8
	CmdLeaseRelease   CmdType = 9
	CmdLeaseExpire    CmdType = 10
	CmdPutCredentials CmdType = 11
	CmdPutToken       CmdType = 12
	CmdSetMember      CmdType = 13
	CmdRemoveMember   CmdType = 14
	// CmdBatch carries many commands in one log entry (leader-side batching).
	CmdBatch CmdType = 15
	// CmdNoop changes nothing; a new leader applies one after its barrier
	// so the FSM's applied index reaches the commit index (raft does not
	// hand its own no-op and barrier entries to the FSM).
	CmdNoop CmdType = 16
	// CmdSetPivoted records that a host was handed to another tier.
	CmdSetPivoted CmdType = 17
	// CmdRevokeToken deletes an API token by its public ID.
	CmdRevokeToken CmdType = 18
	// CmdTouchTokens records when tokens were last used (leader flush).
	CmdTouchTokens CmdType = 19
	// CmdPutOperationIntent sets a reboot, inspect or power-off intent
	// (command_intents.go). A type of its own, not a new kind of
	// CmdPutIntent, so a binary that predates it refuses the entry
	// (ErrUnknownCommand) rather than applying it differently.
	CmdPutOperationIntent CmdType = 20
	// CmdDeleteOperationIntent withdraws one (a power-off by requester).
	CmdDeleteOperationIntent CmdType = 21
)

// bodyVersion is the version of the JSON body of every command that does
// not say otherwise (see versioned).
const bodyVersion = 1

// batchVersion is the version of the CmdBatch framing.
const batchVersion = 1

// versioned is implemented by commands whose body moved past version 1: a
// binary that does not know the newer version refuses the entry
// (ErrUnknownCommand) instead of applying it without the new fields, which
// would make its FSM differ from its peers'.
type versioned interface {
	bodyVersion() byte
}

// maxVersion is the newest body version this binary reads for type t (0:
// a type it does not know); every older one still decodes (old entries
// stay in logs and snapshots). The table is commandTable (command_table.go).
//
// Two kinds of version share the byte: a JSON body's layout (PutToken v2
// adds creation and expiry) and, for the hot-path types written binary,
// version 2 = the MessagePack body (codec.go).
func maxVersion(t CmdType) byte { return commandVersions[t] }

// Command is one state change. Every field the FSM needs that is not
// deterministic (time, random IDs, token hashes) is filled in before the
// command enters the log.
type Command interface {
	Type() CmdType
	// Key names what the command touches; a batch holds at most one
	// command per key, so two writes of one host never share a Raft index.
	Key() string
}

// InitCmd is applied once by the first leader of a new cluster.
type InitCmd struct {
	ClusterID      string `json:"clusterID"`
	AdminTokenHash string `json:"adminTokenHash"`
	// Time is when the leader initialised the cluster (the admin token's
	// creation time); absent in entries written before 2026-11-23.
	Time time.Time `json:"time,omitzero"`
}

// PutHostCmd creates or updates a host's spec.
type PutHostCmd struct {
	Host wire.Host `json:"host"`
	Time time.Time `json:"time"`
}

// A host naming config drive records, or carrying an operation history
// from another tier (a pivot), is body version 3 (codec.go): a v2 binary
// would drop either and its state would differ from its peers'. A host
// with a day-two spec is version 4 for the same reason.
func (c PutHostCmd) bodyVersion() byte {
	h := &c.Host
	if h.BIOS != nil || len(h.Firmware) > 0 || h.RAID != nil || h.UpdatePolicy != nil {
		return putHostDayTwoVersion
	}
	if h.UserData != nil || h.NetworkData != nil || h.MetaData != nil || h.PreprovisioningNetworkData != nil ||
		(h.Status != nil && h.Status.OperationHistory != nil) {
		return putHostDataVersion
	}
	return BodyBinary
}

// DeleteHostCmd asks for a host's deletion. TaskFence (body version
// deleteHostFencedVersion) refuses it while a BMC task of any kind is
// recorded on the host, unless Force; a body without it (older entries) deletes as
// before.
type DeleteHostCmd struct {
	Name      string    `json:"name"`
	TaskFence bool      `json:"taskFence,omitempty"`
	Force     bool      `json:"force,omitempty"`
	Time      time.Time `json:"time,omitzero"`
}

func (c DeleteHostCmd) bodyVersion() byte {
	if c.TaskFence {
		return deleteHostFencedVersion
	}
	return bodyJSON
}

// PutIntentCmd sets (or replaces) one intent of a host.
type PutIntentCmd struct {
	Name   string      `json:"name"`
	Kind   string      `json:"kind"`
	Intent wire.Intent `json:"intent"`
	// Time is when the leader took the request: the time of the event a
	// forced detach or drain over a BMC task writes (fsm_taskfence.go).
	// Absent in older entries, which never write one.
	Time time.Time `json:"time,omitzero"`
}

// DeleteIntentCmd removes one intent (attach, restore).
type DeleteIntentCmd struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// StatusCmd is an agent's status report for one host of its rack.
type StatusCmd struct {
	Rack   string            `json:"rack"`
	Name   string            `json:"name"`
	Report wire.StatusReport `json:"report"`
	Time   time.Time         `json:"time"`
}

// LeaseAcquireCmd asks for a rack's lease (compare-and-set).
type LeaseAcquireCmd struct {
	Rack   string        `json:"rack"`
	Holder string        `json:"holder"`
	TTL    time.Duration `json:"ttl"`
	Time   time.Time     `json:"time"`
}

// LeaseRenewCmd renews the current lease; TTL 0 keeps the old TTL.
type LeaseRenewCmd struct {
	Rack   string        `json:"rack"`
	Holder string        `json:"holder"`
	Epoch  uint64        `json:"epoch"`
	TTL    time.Duration `json:"ttl,omitempty"`
	Time   time.Time     `json:"time"`
}

// LeaseReleaseCmd gives the lease up.
type LeaseReleaseCmd struct {
	Rack   string    `json:"rack"`
	Holder string    `json:"holder"`
	Epoch  uint64    `json:"epoch"`
	Time   time.Time `json:"time"`
}

// LeaseExpireCmd is applied by the leader's timer. It is a compare-and-set:
// it expires the lease only if it is still the grant or renewal the timer
// was armed for (RenewIndex).
type LeaseExpireCmd struct {
	Rack       string    `json:"rack"`
	Epoch      uint64    `json:"epoch"`
	RenewIndex uint64    `json:"renewIndex"`
	Time       time.Time `json:"time"`
}

// PutCredentialsCmd stores BMC credentials with a plaintext password. Only
// logs written before sealing (command_sealed.go) hold it: it is still
// applied from them, and never written any more.
type PutCredentialsCmd struct {
	Name     string `json:"name"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// PutTokenCmd stores an API token by its SHA-256 hash. Body version 1 had
// no times; version 2 (written now) adds CreatedAt and ExpiresAt, stamped by
// the leader's handler (zero ExpiresAt: never expires).
type PutTokenCmd struct {
	Hash      string    `json:"hash"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Rack      string    `json:"rack,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// putTokenVersion is PutTokenCmd's body version.
const putTokenVersion = 2

func (PutTokenCmd) bodyVersion() byte { return putTokenVersion }

// SetPivotedCmd records that a host now belongs to tier To (it stays
// detached here), or requests its deletion when DeleteSource is set.
type SetPivotedCmd struct {
	Name         string `json:"name"`
	To           string `json:"to"`
	DeleteSource bool   `json:"deleteSource,omitempty"`
}

// NoopCmd changes nothing (see CmdNoop).
type NoopCmd struct {
	Node string `json:"node"`
}

// SetMemberCmd records a member's HTTP address and, since the version
// gate, what its binary applies (Version; binaries from before the gate
// ignore the field, so the leader may write it in a mixed cluster).
type SetMemberCmd struct {
	ID       string         `json:"id"`
	HTTPAddr string         `json:"httpAddr"`
	Version  *MemberVersion `json:"version,omitempty"`
}

// MemberVersion is what a member's binary applies, as the leader recorded
// it in Raft: the binary's version and its command table.
type MemberVersion struct {
	Binary   string   `json:"binary"`
	Commands Commands `json:"commands"`
}

// RemoveMemberCmd forgets a member's HTTP address.
type RemoveMemberCmd struct {
	ID string `json:"id"`
}

func (InitCmd) Type() CmdType           { return CmdInit }
func (PutHostCmd) Type() CmdType        { return CmdPutHost }
func (DeleteHostCmd) Type() CmdType     { return CmdDeleteHost }
func (PutIntentCmd) Type() CmdType      { return CmdPutIntent }
func (DeleteIntentCmd) Type() CmdType   { return CmdDeleteIntent }
func (StatusCmd) Type() CmdType         { return CmdStatus }
func (LeaseAcquireCmd) Type() CmdType   { return CmdLeaseAcquire }
func (LeaseRenewCmd) Type() CmdType     { return CmdLeaseRenew }
func (LeaseReleaseCmd) Type() CmdType   { return CmdLeaseRelease }
func (LeaseExpireCmd) Type() CmdType    { return CmdLeaseExpire }
func (PutCredentialsCmd) Type() CmdType { return CmdPutCredentials }
func (PutTokenCmd) Type() CmdType       { return CmdPutToken }
func (SetMemberCmd) Type() CmdType      { return CmdSetMember }
func (NoopCmd) Type() CmdType           { return CmdNoop }
func (SetPivotedCmd) Type() CmdType     { return CmdSetPivoted }
func (RemoveMemberCmd) Type() CmdType   { return CmdRemoveMember }

func (InitCmd) Key() string             { return "init" }
func (c PutHostCmd) Key() string        { return "h/" + c.Host.Name }
func (c DeleteHostCmd) Key() string     { return "h/" + c.Name }
func (c PutIntentCmd) Key() string      { return "h/" + c.Name }
func (c DeleteIntentCmd) Key() string   { return "h/" + c.Name }
func (c StatusCmd) Key() string         { return "h/" + c.Name }
func (c LeaseAcquireCmd) Key() string   { return "r/" + c.Rack }
func (c LeaseRenewCmd) Key() string     { return "r/" + c.Rack }
func (c LeaseReleaseCmd) Key() string   { return "r/" + c.Rack }
func (c LeaseExpireCmd) Key() string    { return "r/" + c.Rack }
func (c PutCredentialsCmd) Key() string { return "c/" + c.Name }
func (c PutTokenCmd) Key() string       { return "t/" + c.Hash }
func (c SetMemberCmd) Key() string      { return "m/" + c.ID }
func (NoopCmd) Key() string             { return "noop" }
func (c SetPivotedCmd) Key() string     { return "h/" + c.Name }
func (c RemoveMemberCmd) Key() string   { return "m/" + c.ID }
func (RevokeTokenCmd) Type() CmdType    { return CmdRevokeToken }
func (TouchTokensCmd) Type() CmdType    { return CmdTouchTokens }
func (c RevokeTokenCmd) Key() string    { return "t/" + c.ID }
func (TouchTokensCmd) Key() string      { return "t/touch" }

// Encode writes a command as type byte, version byte, body (v2 binary for
// the commands commandTable marks binary, v1 JSON for the rest).
func Encode(c Command) ([]byte, error) {
	ver, out, err := encodeBody(c, 2)
	if err != nil {
		return nil, fmt.Errorf("encode command %d: %w", c.Type(), err)
	}
	if vc, ok := c.(versioned); ok && vc.bodyVersion() > ver {
		ver = vc.bodyVersion() // a body with a newer layout (PutToken v2, PutHost v3)
	}
	out[0], out[1] = byte(c.Type()), ver
	return out, nil
}

// EncodeBatch joins already encoded commands into one CmdBatch entry:
// type, version, uvarint count, then uvarint length + bytes for each.
func EncodeBatch(parts [][]byte) []byte {
	return AppendBatch(make([]byte, 0, BatchBound(parts)), parts)
}

// BatchBound is an upper bound of the length of parts' CmdBatch entry.
func BatchBound(parts [][]byte) int {
	n := 2 + binary.MaxVarintLen64
	for _, p := range parts {
		n += binary.MaxVarintLen64 + len(p)
	}
	return n
}

// AppendBatch appends the CmdBatch entry of parts to dst (the leader
// encodes into a scratch buffer a batch it compresses).
func AppendBatch(dst []byte, parts [][]byte) []byte {
	out := append(dst, byte(CmdBatch), batchVersion)
	out = binary.AppendUvarint(out, uint64(len(parts)))
	for _, p := range parts {
		out = binary.AppendUvarint(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

// DecodeBatch splits a CmdBatch entry into its encoded commands.
func DecodeBatch(b []byte) ([][]byte, error) {
	if len(b) < 2 || CmdType(b[0]) != CmdBatch || b[1] != batchVersion {
		return nil, ErrUnknownCommand
	}
	b = b[2:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("batch: bad count")
	}
	b = b[k:]
	parts := make([][]byte, 0, n)
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, fmt.Errorf("batch: part %d truncated", i)
		}
		parts = append(parts, b[k:k+int(l)])
		b = b[k+int(l):]
	}
	return parts, nil
}

// Decode reads one (non-batch) command.
func Decode(b []byte) (Command, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("command too short (%d bytes)", len(b))
	}
	ver, body := b[1], b[2:]
	if ver < 1 || ver > maxVersion(CmdType(b[0])) {
		return nil, fmt.Errorf("%w: type %d version %d", ErrUnknownCommand, b[0], ver)
	}
	spec := commandTable[CmdType(b[0])]
	if spec.decode == nil {
		return nil, fmt.Errorf("%w: type %d", ErrUnknownCommand, b[0])
	}
	c, err := spec.decode(ver, body)
	if err != nil {
		return nil, fmt.Errorf("decode command type %d: %w", b[0], err)
	}
	return c, nil
}
