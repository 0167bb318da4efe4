package chaos

import (
	"fmt"
	"math/rand"
	"time"
)

// Fault kinds. Partitions are nftables drop rules (silent); "holder" is
// the agent holding the target rack's lease when the fault starts, the
// leader is the coordinators' Raft leader at that moment.
const (
	FaultAgentLeader       = "partition-agent-leader"       // holder ↔ leader, both ways
	FaultAgentCoords       = "partition-agent-coordinators" // holder ↔ every coordinator, both ways
	FaultAgentCoordsIn     = "partition-agent-coordinators-in"
	FaultAgentCoordsOut    = "partition-agent-coordinators-out"
	FaultLeaderMinority    = "partition-leader-minority"   // leader alone ↔ both followers
	FaultFollowerMinority  = "partition-follower-minority" // one follower alone; the leader keeps a majority
	FaultFollowerFollower  = "partition-follower-follower" // the two followers from each other
	FaultLeaderOneWay      = "partition-leader-followers-oneway"
	FaultClient            = "partition-client"  // operators' namespace ↔ leader (or all members)
	FaultPauseAgent        = "pause-agent"       // SIGSTOP the holder, SIGCONT at the end
	FaultPauseCoordinator  = "pause-coordinator" // SIGSTOP leader or a follower
	FaultKillAgent         = "kill-agent"        // SIGKILL the holder, restart at the end
	FaultKillCoordinator   = "kill-coordinator"  // SIGKILL leader or a follower, restart at the end
	FaultKillLeaderInGrant = "kill-leader-in-grant"
	FaultAgentNewID        = "agent-new-id"

	// Storage and client faults (StorageFaultKinds): drawn only when a run
	// asks for them (Config.Faults), so every earlier seed keeps its
	// schedule.
	FaultDiskFull       = "disk-full"              // fill a coordinator's data file system (leader or follower); heal frees it
	FaultDamagedRestart = "damaged-file-restart"   // SIGKILL a coordinator, damage a data file, start it; heal runs the runbook
	FaultConnBurst      = "fresh-connection-burst" // bursts of concurrent requests on new HTTP/2 connections from the operators' namespace
)

// Damage is what FaultDamagedRestart does to the member's data dir.
const (
	DamageTruncateLog     = "truncate-raft.db" // cut raft.db (bolt: stable store and log) to half its size
	DamageDeleteSnapshots = "delete-snapshots" // remove snapshots/
)

// Fault sets a run draws from (Config.Faults).
const (
	FaultsClassic = "classic" // FaultKinds: the schedule every earlier seed drew
	FaultsStorage = "storage" // StorageFaultKinds only
	FaultsAll     = "all"     // both
)

// FaultKinds is every kind a schedule draws from.
var FaultKinds = []string{
	FaultAgentLeader, FaultAgentCoords, FaultAgentCoordsIn, FaultAgentCoordsOut,
	FaultLeaderMinority, FaultFollowerMinority, FaultFollowerFollower, FaultLeaderOneWay, FaultClient,
	FaultPauseAgent, FaultPauseCoordinator, FaultKillAgent, FaultKillCoordinator, FaultKillLeaderInGrant, FaultAgentNewID,
}

// StorageFaultKinds are the storage and client faults.
var StorageFaultKinds = []string{FaultDiskFull, FaultDamagedRestart, FaultConnBurst}

// KindsOf returns the kinds of a fault set (FaultsClassic, FaultsStorage,
// FaultsAll; "" is FaultsClassic).
func KindsOf(set string) ([]string, error) {
	switch set {
	case "", FaultsClassic:
		return FaultKinds, nil
	case FaultsStorage:
		return StorageFaultKinds, nil
	case FaultsAll:
		// The schedule's kinds; the flash scenario runs after it (Run).
		return append(append([]string(nil), FaultKinds...), StorageFaultKinds...), nil
	case FaultsFirmware:
		return FirmwareFaultKinds, nil
	}
	return nil, fmt.Errorf("fault set %q: use %s, %s, %s or %s", set, FaultsClassic, FaultsStorage, FaultsFirmware, FaultsAll)
}

// Fault is one scheduled fault: it starts At after the workload starts and
// is healed Dur later (partitions removed, paused processes continued,
// killed ones restarted).
type Fault struct {
	At   time.Duration `json:"at"`
	Dur  time.Duration `json:"dur"`
	Kind string        `json:"kind"`
	Rack string        `json:"rack,omitempty"` // agent faults
	// Leader says whether a coordinator fault hits the leader (else a
	// follower); for FaultClient, whether only the leader is cut (else all).
	Leader bool `json:"leader,omitempty"`
	// Delay is, for FaultKillLeaderInGrant, the time between the holder's
	// SIGTERM (which releases the lease) and the leader's SIGKILL, so the
	// standby's acquire meets a dying leader.
	Delay time.Duration `json:"delay,omitempty"`
	// Damage is, for FaultDamagedRestart, what is done to the data dir.
	Damage string `json:"damage,omitempty"`
}

func (f Fault) String() string {
	s := fmt.Sprintf("%s+%s %s", f.At.Round(time.Millisecond), f.Dur.Round(time.Millisecond), f.Kind)
	if f.Rack != "" {
		s += " rack=" + f.Rack
	}
	if f.Leader {
		s += " leader"
	}
	if f.Delay > 0 {
		s += " delay=" + f.Delay.String()
	}
	if f.Damage != "" {
		s += " damage=" + f.Damage
	}
	return s
}

// Schedule draws the faults of a run from seed: the same seed and inputs
// give the same schedule. Faults follow each other with 2–6 s of calm; each
// lasts 2–12 s, so both short blips and outages longer than a lease TTL
// happen. The last fault may still be on when the run ends: the final heal
// then lifts it, so convergence is measured from a real outage. Nothing
// starts in the last 4 s.
func Schedule(seed int64, d time.Duration, racks []string) []Fault {
	return ScheduleKinds(seed, d, racks, FaultKinds)
}

// ScheduleKinds is Schedule drawing from kinds.
func ScheduleKinds(seed int64, d time.Duration, racks []string, kinds []string) []Fault {
	rng := rand.New(rand.NewSource(seed))
	var out []Fault
	t := 3 * time.Second
	for {
		f := Fault{
			At:   t,
			Dur:  2*time.Second + time.Duration(rng.Int63n(int64(10*time.Second))),
			Kind: kinds[rng.Intn(len(kinds))],
			Rack: racks[rng.Intn(len(racks))],
		}
		f.Leader = rng.Intn(2) == 0
		switch f.Kind {
		case FaultKillLeaderInGrant:
			f.Delay = 200*time.Millisecond + time.Duration(rng.Int63n(int64(time.Second)))
			f.Leader = false
		case FaultLeaderMinority, FaultLeaderOneWay, FaultFollowerFollower, FaultFollowerMinority:
			f.Rack, f.Leader = "", false
		case FaultClient, FaultPauseCoordinator, FaultKillCoordinator, FaultDiskFull:
			f.Rack = ""
		case FaultDamagedRestart:
			f.Rack = ""
			f.Damage = DamageTruncateLog
			if rng.Intn(2) == 0 {
				f.Damage = DamageDeleteSnapshots
			}
		case FaultConnBurst:
			f.Rack, f.Leader = "", false
		default:
			f.Leader = false
		}
		if f.At > d-4*time.Second {
			break
		}
		out = append(out, f)
		t += f.Dur + 2*time.Second + time.Duration(rng.Int63n(int64(4*time.Second)))
	}
	return out
}
