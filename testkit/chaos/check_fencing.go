package chaos

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// Violation is one thing a checker found wrong.
type Violation struct {
	Checker string `json:"checker"` // fencing, linearizability, durability, liveness, logs
	What    string `json:"what"`
}

func (v Violation) String() string { return v.Checker + ": " + v.What }

// Mutation is one mutating call a BMC received, as bmcsim audited it.
type Mutation struct {
	Rack   string    `json:"rack"` // the rack the BMC belongs to
	Agent  string    `json:"agent"`
	UARack string    `json:"uaRack"`
	Epoch  uint64    `json:"epoch"`
	At     time.Time `json:"at"`
	Call   string    `json:"call"` // "PORT METHOD PATH"
	UA     string    `json:"ua"`
}

var agentUA = regexp.MustCompile(`^rackfence-agent/\S+ \(([^;]+); rack=([^;]+); epoch=(\d+)\)$`)

// Mutations turns a rack's audit lines into mutations. A line whose
// User-Agent is not the agent's (so no epoch can be read) keeps epoch 0,
// which the fencing check reports: every mutating call must name its lease.
func Mutations(rack string, lines []bmcsim.AuditLine) ([]Mutation, error) {
	out := make([]Mutation, 0, len(lines))
	for _, l := range lines {
		at, err := time.Parse(time.RFC3339Nano, l.Time)
		if err != nil {
			return nil, fmt.Errorf("audit of rack %s: time %q: %w", rack, l.Time, err)
		}
		m := Mutation{Rack: rack, At: at, Call: fmt.Sprintf("%d %s %s", l.Port, l.Method, l.Path), UA: l.UserAgent}
		if g := agentUA.FindStringSubmatch(l.UserAgent); g != nil {
			m.Agent, m.UARack = g[1], g[2]
			m.Epoch, _ = strconv.ParseUint(g[3], 10, 64)
		}
		out = append(out, m)
	}
	return out, nil
}

// CheckFencing checks the fencing property. leases is each rack's lease
// history as the coordinator recorded it (GET /v1/racks/{rack}/leases,
// merged over the run so nothing the bounded history dropped is missed).
// A window is [grantedAt, endedAt]; a lease not ended is open. It reports
// windows of one rack that overlap, and every mutation that does not fall
// inside the window of the epoch it names, held by the agent it names, of
// the rack its BMC belongs to.
func CheckFencing(leases map[string][]wire.LeaseRecord, muts []Mutation) []Violation {
	var out []Violation
	bad := func(f string, a ...any) { out = append(out, Violation{Checker: "fencing", What: fmt.Sprintf(f, a...)}) }
	byEpoch := map[string]map[uint64]wire.LeaseRecord{}
	racks := make([]string, 0, len(leases))
	for r := range leases {
		racks = append(racks, r)
	}
	sort.Strings(racks)
	for _, r := range racks {
		recs := append([]wire.LeaseRecord(nil), leases[r]...)
		sort.Slice(recs, func(i, j int) bool {
			if !recs[i].GrantedAt.Equal(recs[j].GrantedAt) {
				return recs[i].GrantedAt.Before(recs[j].GrantedAt)
			}
			return recs[i].Epoch < recs[j].Epoch
		})
		byEpoch[r] = map[uint64]wire.LeaseRecord{}
		for i, rec := range recs {
			byEpoch[r][rec.Epoch] = rec
			if i == 0 {
				continue
			}
			prev := recs[i-1]
			if rec.Epoch <= prev.Epoch {
				bad("rack %s: epoch %d (%s) granted at %s after epoch %d (%s): epochs must grow with grants",
					r, rec.Epoch, rec.Holder, ts(rec.GrantedAt), prev.Epoch, prev.Holder)
			}
			if prev.EndedAt == nil {
				bad("rack %s: epoch %d (%s) granted at %s while epoch %d (%s, granted %s) never ended",
					r, rec.Epoch, rec.Holder, ts(rec.GrantedAt), prev.Epoch, prev.Holder, ts(prev.GrantedAt))
			} else if prev.EndedAt.After(rec.GrantedAt) {
				bad("rack %s: epoch %d (%s) granted at %s, %s before epoch %d (%s) ended at %s",
					r, rec.Epoch, rec.Holder, ts(rec.GrantedAt), prev.EndedAt.Sub(rec.GrantedAt), prev.Epoch, prev.Holder, ts(*prev.EndedAt))
			}
		}
	}
	for _, m := range muts {
		if m.Epoch == 0 {
			bad("rack %s: %s at %s from %q names no lease epoch", m.Rack, m.Call, ts(m.At), m.UA)
			continue
		}
		if m.UARack != m.Rack {
			bad("rack %s: %s at %s came from %s under a lease of rack %s", m.Rack, m.Call, ts(m.At), m.Agent, m.UARack)
			continue
		}
		rec, ok := byEpoch[m.Rack][m.Epoch]
		if !ok {
			bad("rack %s: %s at %s by %s under epoch %d, which the coordinator never granted", m.Rack, m.Call, ts(m.At), m.Agent, m.Epoch)
			continue
		}
		if rec.Holder != m.Agent {
			bad("rack %s: %s at %s by %s under epoch %d, which was granted to %s", m.Rack, m.Call, ts(m.At), m.Agent, m.Epoch, rec.Holder)
			continue
		}
		if m.At.Before(rec.GrantedAt) {
			bad("rack %s: %s at %s by %s, %s before its epoch %d was granted (%s)", m.Rack, m.Call, ts(m.At), m.Agent,
				rec.GrantedAt.Sub(m.At), m.Epoch, ts(rec.GrantedAt))
		}
		if rec.EndedAt != nil && m.At.After(*rec.EndedAt) {
			bad("rack %s: %s at %s by %s, %s after its epoch %d ended (%s, %s)", m.Rack, m.Call, ts(m.At), m.Agent,
				m.At.Sub(*rec.EndedAt), m.Epoch, rec.End, ts(*rec.EndedAt))
		}
	}
	return out
}

// MergeLeases adds the records of recs to into (keyed by epoch; a record
// with an end replaces one without).
func MergeLeases(into map[uint64]wire.LeaseRecord, recs []wire.LeaseRecord) {
	for _, r := range recs {
		if old, ok := into[r.Epoch]; ok && old.EndedAt != nil && r.EndedAt == nil {
			continue
		}
		into[r.Epoch] = r
	}
}

func ts(t time.Time) string { return t.UTC().Format("15:04:05.000000") }
