package coordinator

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/raft"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/internal/version"
	"github.com/rackfence/rackfence/shared/wire"
)

// The version gate: the leader writes a command type or body version only
// when every voter's binary applies it. What each member applies is in
// the FSM (SetMemberCmd.Version, recorded by the leader from the member's
// health answer, peers.go); a voter with no record runs a binary from
// before the gate and applies fsm.LegacyVersions. Everything in fsm.LegacyVersions
// passes without a look at the members, so today's writes never wait.

// binaryVersion names this binary in the member table.
func binaryVersion() string {
	i := version.Get("rackfence-coordinator")
	return i.Version + " (" + i.Commit + ")"
}

// thisMember is this member's record.
func (s *Store) thisMember() fsm.MemberVersion {
	return fsm.MemberVersion{Binary: binaryVersion(), Commands: fsm.WireCommands(s.fsm.Commands())}
}

// voterIDs returns the voters of the current configuration (cached; the
// peer loop and leadership changes refresh it).
func (s *Store) voterIDs() []string {
	if v := s.voters.Load(); v != nil {
		return *v
	}
	return s.refreshVoters()
}

func (s *Store) refreshVoters() []string {
	cf := s.raft.GetConfiguration()
	if cf.Error() != nil {
		return nil
	}
	var ids []string
	for _, srv := range cf.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			ids = append(ids, string(srv.ID))
		}
	}
	sort.Strings(ids)
	s.voters.Store(&ids)
	return ids
}

// clusterTable is the table every voter applies, cached until the voters
// or the recorded versions change.
type clusterTable struct {
	gen    uint64
	voters *[]string
	table  map[fsm.CmdType]byte
}

func (s *Store) clusterTable() map[fsm.CmdType]byte {
	gen, voters := s.fsm.VersionsGen(), s.voters.Load()
	if voters == nil {
		s.refreshVoters()
		voters = s.voters.Load()
	}
	if c := s.gateCache.Load(); c != nil && c.gen == gen && c.voters == voters {
		return c.table
	}
	var ts []map[fsm.CmdType]byte
	if voters != nil {
		for _, id := range *voters {
			t, _ := s.fsm.MemberTable(id)
			ts = append(ts, t)
		}
	}
	t := fsm.Intersect(ts...)
	s.gateCache.Store(&clusterTable{gen: gen, voters: voters, table: t})
	return t
}

// gate refuses an encoded command some voter cannot apply.
func (s *Store) gate(data []byte) error {
	if len(data) < 2 {
		return nil
	}
	ct, v := fsm.CmdType(data[0]), data[1]
	if fsm.Supports(s.clusterTable(), ct, v) {
		return nil
	}
	var lag []string
	for _, id := range s.voterIDs() {
		t, bin := s.fsm.MemberTable(id)
		if !fsm.Supports(t, ct, v) {
			lag = append(lag, id+" ("+bin+")")
		}
	}
	if len(lag) == 0 {
		return nil
	}
	return &fsm.Error{Code: wire.CodeUpgradeRequired, Message: fmt.Sprintf(
		"this write needs command type %d at body version %d, which member(s) %s do not apply yet: "+
			"upgrade them to this leader's binary (%s), then retry (the cluster status lists each member's version)",
		ct, v, strings.Join(lag, ", "), binaryVersion())}
}

// Supports reports whether every voter applies command type ct at body
// version v: a handler with a fallback writes the old form when not.
func (s *Store) Supports(ct fsm.CmdType, v byte) bool {
	return s.gate([]byte{byte(ct), v}) == nil
}

// upgradeStatus is the gate's view for GET /v1/status.
func (s *Store) upgradeStatus() *wire.UpgradeStatus {
	out := &wire.UpgradeStatus{}
	low := -1
	for _, id := range s.voterIDs() {
		t, bin := s.fsm.MemberTable(id)
		// On a tie the legacy release wins: it is the older one.
		if l := fsm.Level(t); low < 0 || l < low || (l == low && bin == fsm.LegacyVersion) {
			low, out.EffectiveVersion = l, bin
		}
		if m := fsm.Missing(s.fsm.Commands(), t); len(m) > 0 {
			out.Lagging = append(out.Lagging, wire.LaggingMember{ID: id, Version: bin, Missing: m})
		}
	}
	return out
}
