package fsm

// commandTable is every command type this binary applies: the newest body
// version it reads, whether it is written as MessagePack, how its body
// decodes and how it applies. Decode, applyCmd, encodeBody, the version
// table (commandVersions) and the gate all read it, so a new command is
// its CmdType constant, its struct with Type and Key, one entry here and
// a test; a new body version is a change of the entry's version.
// TestEveryCmdTypeIsInTheTable fails on a constant without an entry,
// TestTableEntriesMatchTheirType on an entry under another type's number.
var commandTable = map[CmdType]cmdSpec{
	CmdInit:           cmd((*FSM).applyInit, bodyJSON, jsonBody),
	CmdPutHost:        cmd((*FSM).applyPutHost, putHostDayTwoVersion, binBody),
	CmdDeleteHost:     cmd((*FSM).applyDeleteHost, deleteHostFencedVersion, jsonBody),
	CmdPutIntent:      cmd((*FSM).applyPutIntent, BodyBinary, binBody),
	CmdDeleteIntent:   cmd((*FSM).applyDeleteIntent, BodyBinary, binBody),
	CmdStatus:         cmdDecoded((*FSM).applyStatus, StatusDriveServerVersion, binBody, decodeStatus),
	CmdLeaseAcquire:   first(cmd((*FSM).applyLeaseAcquire, BodyBinary, binBody)),
	CmdLeaseRenew:     first(cmd((*FSM).applyLeaseRenew, BodyBinary, binBody)),
	CmdLeaseRelease:   first(cmd((*FSM).applyLeaseRelease, BodyBinary, binBody)),
	CmdLeaseExpire:    first(cmd((*FSM).applyLeaseExpire, bodyJSON, jsonBody)),
	CmdPutCredentials: cmd((*FSM).applyPutCredentials, bodyJSON, jsonBody),
	CmdPutToken:       cmd((*FSM).applyPutToken, putTokenVersion, jsonBody),
	CmdSetMember:      cmd((*FSM).applySetMember, bodyJSON, jsonBody),
	CmdRemoveMember:   cmd((*FSM).applyRemoveMember, bodyJSON, jsonBody),
	CmdNoop:           cmd((*FSM).applyNoop, bodyJSON, jsonBody),
	CmdSetPivoted:     cmd((*FSM).applySetPivoted, bodyJSON, jsonBody),
	CmdRevokeToken:    cmd((*FSM).applyRevokeToken, bodyJSON, jsonBody),
	CmdTouchTokens:    cmd((*FSM).applyTouchTokens, bodyJSON, jsonBody),
	// Sealed credentials (command_sealed.go); v2 carries a data bag.
	CmdPutSealedCredentials: cmd((*FSM).applyPutSealedCredentials, sealedCredsVersion, jsonBody),
	CmdResealCredentials:    cmd((*FSM).applyResealCredentials, sealedCredsVersion, jsonBody),
	// Operation intents (reboot, inspect, power-off holds; v2: service,
	// fsm_service.go).
	CmdPutOperationIntent:    cmd((*FSM).applyPutOperationIntent, operationServiceVersion, jsonBody),
	CmdDeleteOperationIntent: cmd((*FSM).applyDeleteOperationIntent, operationServiceVersion, jsonBody),
	// Per-rack status reports (command_rackstatus.go); v3 names each
	// host's createdIndex, v4 carries hardware health (command_health.go),
	// v5 day-two status (command_daytwo.go); an older body is read
	// without them.
	CmdRackStatus: cmdDecoded((*FSM).applyRackStatus, RackStatusDriveServerVersion, binBody, decodeRackStatus),
	// A host's BMC task record, the fence of day-two work (command_bmctask.go).
	// v2 names the version before a flash.
	CmdBMCTask: cmd((*FSM).applyBMCTask, BMCTaskFromVersion, jsonBody),
	// A host's BMC account record: pending, confirmed or off (command_bmcaccount.go).
	CmdBMCAccount: cmd((*FSM).applyBMCAccount, bodyJSON, jsonBody),
	// An operator's request to rotate a host's BMC account (command_bmcrotation.go).
	CmdRequestBMCRotation: cmd((*FSM).applyRequestBMCRotation, bodyJSON, jsonBody),
	// Framing, not commands: Apply opens them before any command decodes.
	CmdBatch:      {version: batchVersion},
	CmdCompressed: {version: CompressedVersion}, // command_compressed.go
}

// cmdSpec is one command type's entry in commandTable.
type cmdSpec struct {
	// version is the newest body version this binary reads; every older
	// one still decodes (old entries stay in logs and snapshots).
	version byte
	// binary: the command is written as MessagePack (BodyBinary) rather
	// than v1 JSON, for the writes agents and operators make all the time.
	binary bool
	// decode reads a body of a version from 1 to version; nil for framing.
	decode func(ver byte, body []byte) (Command, error)
	// apply applies the decoded command; the caller holds f.mu.
	apply func(f *FSM, t *tx, c Command) (any, error)
	// zero is the command's zero value, for the tests that check the
	// table against the commands' Type methods.
	zero Command
	// first: the leader's batcher sends the command to Raft at once, in
	// an entry of its own, ahead of the writes queued before it, and
	// never sheds it as busy (Leads). A rack's
	// lease must not wait behind the rack reports of a fleet: an agent
	// whose renewal misses its deadline drops every host it manages.
	first bool
}

// first marks an entry Leads.
func first(c cmdSpec) cmdSpec {
	c.first = true
	return c
}

// Leads reports whether a command of type t goes ahead of queued writes
// on the leader (the rack leases: acquire, renew, release, expire).
// Ordering among writes queued at once is the leader's choice either way;
// the log still orders them, so every member applies the same sequence.
func Leads(t CmdType) bool { return commandTable[t].first }

// Body formats of cmd's entries.
const (
	jsonBody = false // every version is JSON (codec.go: bodyJSON)
	binBody  = true  // v1 JSON, v2 and later MessagePack (BodyBinary)
)

// cmd is the entry of command T, applied by apply.
func cmd[T Command](apply func(*FSM, *tx, T) (any, error), version byte, binary bool) cmdSpec {
	return cmdDecoded(apply, version, binary, func(ver byte, body []byte) (Command, error) {
		return decodeBody[T](binary, ver, body)
	})
}

// cmdDecoded is cmd with a decoder of its own (one that adjusts what
// decodeBody reads).
func cmdDecoded[T Command](apply func(*FSM, *tx, T) (any, error), version byte, binary bool,
	decode func(ver byte, body []byte) (Command, error)) cmdSpec {
	var zero T
	return cmdSpec{version: version, binary: binary, decode: decode, zero: zero,
		apply: func(f *FSM, t *tx, c Command) (any, error) { return apply(f, t, c.(T)) }}
}
