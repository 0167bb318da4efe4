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
)

// FaultKinds is every kind a schedule draws from.
var FaultKinds = []string{
	FaultAgentLeader, FaultAgentCoords, FaultAgentCoordsIn, FaultAgentCoordsOut,
	FaultLeaderMinority, FaultFollowerMinority, FaultFollowerFollower, FaultLeaderOneWay, FaultClient,
	FaultPauseAgent, FaultPauseCoordinator, FaultKillAgent, FaultKillCoordinator, FaultKillLeaderInGrant, FaultAgentNewID,
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
	return s
}

// Schedule draws the faults of a run from seed: the same seed and inputs
// give the same schedule. Faults follow each other with 2–6 s of calm; each
// lasts 2–12 s, so both short blips and outages longer than a lease TTL
// happen. The last fault may still be on when the run ends: the final heal
// then lifts it, so convergence is measured from a real outage. Nothing
// starts in the last 4 s.
func Schedule(seed int64, d time.Duration, racks []string) []Fault {
	rng := rand.New(rand.NewSource(seed))
	var out []Fault
	t := 3 * time.Second
	for {
		f := Fault{
			At:   t,
			Dur:  2*time.Second + time.Duration(rng.Int63n(int64(10*time.Second))),
			Kind: FaultKinds[rng.Intn(len(FaultKinds))],
			Rack: racks[rng.Intn(len(racks))],
		}
		f.Leader = rng.Intn(2) == 0
		switch f.Kind {
		case FaultKillLeaderInGrant:
			f.Delay = 200*time.Millisecond + time.Duration(rng.Int63n(int64(time.Second)))
			f.Leader = false
		case FaultLeaderMinority, FaultLeaderOneWay, FaultFollowerFollower, FaultFollowerMinority:
			f.Rack, f.Leader = "", false
		case FaultClient, FaultPauseCoordinator, FaultKillCoordinator:
			f.Rack = ""
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
