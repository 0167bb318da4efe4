package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Applied is one fault as it happened: its resolved targets and times.
type Applied struct {
	Fault
	Start  time.Time `json:"start"`
	Healed time.Time `json:"healed"`
	Detail string    `json:"detail"`
	Err    string    `json:"err,omitempty"`
}

// Nemesis applies faults to a cluster and heals them.
type Nemesis struct {
	c   *Cluster
	log *slog.Logger

	mu         sync.Mutex
	applied    []Applied
	heals      []func(context.Context) string // the current fault's own heal, before the common one
	violations []Violation                    // what the storage and connection faults found
}

// Violations returns what the storage and connection faults found.
func (n *Nemesis) Violations() []Violation {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Violation(nil), n.violations...)
}

func (n *Nemesis) violate(checker, what string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.violations = append(n.violations, Violation{Checker: checker, What: what})
}

// onHeal adds a step to the current fault's heal; its result joins the
// fault's detail.
func (n *Nemesis) onHeal(f func(context.Context) string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.heals = append(n.heals, f)
}

// NewNemesis returns a nemesis over c.
func NewNemesis(c *Cluster, log *slog.Logger) *Nemesis { return &Nemesis{c: c, log: log} }

// Applied returns the faults applied so far.
func (n *Nemesis) Applied() []Applied {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Applied(nil), n.applied...)
}

// leader returns the index of the Raft leader, or -1 when none answers.
func (n *Nemesis) leader(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := n.c.Observer.Status(ctx)
	if err != nil {
		return -1
	}
	return n.c.MemberIndex(st.Leader)
}

// holder returns the agent holding rack's lease, or the rack's first agent
// when none holds it (or the coordinators do not answer).
func (n *Nemesis) holder(ctx context.Context, rack string) *Agent {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	id := ""
	if l, err := n.c.Observer.Racks(ctx); err == nil {
		for _, r := range l.Items {
			if r.Name == rack {
				id = r.Holder
			}
		}
	}
	var first *Agent
	for _, a := range n.c.Agents {
		if a.Rack != rack {
			continue
		}
		if a.ID == id {
			return a
		}
		if first == nil {
			first = a
		}
	}
	return first
}

func coordNode(i int) string { return fmt.Sprintf("c%d", i+1) }

func (n *Nemesis) coordNodes() []string {
	var out []string
	for i := range n.c.Coords {
		out = append(out, coordNode(i))
	}
	return out
}

// start applies f and returns what it hit.
func (n *Nemesis) start(ctx context.Context, f Fault) (string, error) {
	nw := n.c.Net
	ld := n.leader(ctx)
	if ld < 0 {
		ld = 0 // no leader now: treat c1 as the one to hit
	}
	var followers []int
	for i := range n.c.Coords {
		if i != ld {
			followers = append(followers, i)
		}
	}
	target := ld
	if !f.Leader && len(followers) > 0 {
		target = followers[0]
	}
	switch f.Kind {
	case FaultAgentLeader:
		a := n.holder(ctx, f.Rack)
		return fmt.Sprintf("%s ↔ %s", a.ID, coordNode(ld)), nw.Cut([]string{a.Rack + a.Slot}, []string{coordNode(ld)})
	case FaultAgentCoords:
		a := n.holder(ctx, f.Rack)
		return fmt.Sprintf("%s ↔ all coordinators", a.ID), nw.Cut([]string{a.Rack + a.Slot}, n.coordNodes())
	case FaultAgentCoordsIn, FaultAgentCoordsOut:
		a := n.holder(ctx, f.Rack)
		for _, cn := range n.coordNodes() {
			var err error
			if f.Kind == FaultAgentCoordsIn {
				err = nw.Drop(cn, a.Rack+a.Slot)
			} else {
				err = nw.Drop(a.Rack+a.Slot, cn)
			}
			if err != nil {
				return "", err
			}
		}
		if f.Kind == FaultAgentCoordsIn {
			return fmt.Sprintf("coordinators → %s dropped", a.ID), nil
		}
		return fmt.Sprintf("%s → coordinators dropped", a.ID), nil
	case FaultLeaderMinority:
		var fs []string
		for _, i := range followers {
			fs = append(fs, coordNode(i))
		}
		return fmt.Sprintf("%s alone", coordNode(ld)), nw.Cut([]string{coordNode(ld)}, fs)
	case FaultFollowerMinority:
		if len(followers) == 0 {
			return "no follower", nil
		}
		var rest []string
		for i := range n.c.Coords {
			if i != followers[0] {
				rest = append(rest, coordNode(i))
			}
		}
		return fmt.Sprintf("%s alone", coordNode(followers[0])), nw.Cut([]string{coordNode(followers[0])}, rest)
	case FaultFollowerFollower:
		if len(followers) < 2 {
			return "fewer than two followers", nil
		}
		return fmt.Sprintf("%s ↔ %s", coordNode(followers[0]), coordNode(followers[1])),
			nw.Cut([]string{coordNode(followers[0])}, []string{coordNode(followers[1])})
	case FaultLeaderOneWay:
		for _, i := range followers {
			if err := nw.Drop(coordNode(ld), coordNode(i)); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("%s → followers dropped", coordNode(ld)), nil
	case FaultClient:
		if f.Leader {
			return "cl ↔ " + coordNode(ld), nw.Cut([]string{"cl"}, []string{coordNode(ld)})
		}
		return "cl ↔ all coordinators", nw.Cut([]string{"cl"}, n.coordNodes())
	case FaultPauseAgent:
		a := n.holder(ctx, f.Rack)
		return "SIGSTOP " + a.ID, a.Proc.Signal(syscall.SIGSTOP)
	case FaultPauseCoordinator:
		return "SIGSTOP " + coordNode(target), n.c.Coords[target].Signal(syscall.SIGSTOP)
	case FaultKillAgent:
		a := n.holder(ctx, f.Rack)
		a.Proc.Kill()
		return "SIGKILL " + a.ID, nil
	case FaultKillCoordinator:
		n.c.Coords[target].Kill()
		return "SIGKILL " + coordNode(target), nil
	case FaultKillLeaderInGrant:
		a := n.holder(ctx, f.Rack)
		if err := a.Proc.Signal(syscall.SIGTERM); err != nil {
			return "", err
		}
		select {
		case <-time.After(f.Delay):
		case <-ctx.Done():
		}
		ld2 := n.leader(ctx)
		if ld2 < 0 {
			ld2 = ld
		}
		n.c.Coords[ld2].Kill()
		return fmt.Sprintf("SIGTERM %s (releases), SIGKILL %s %s later", a.ID, coordNode(ld2), f.Delay), nil
	case FaultAgentNewID:
		a := n.holder(ctx, f.Rack)
		old := a.ID
		if err := n.c.RestartAgentNewID(a); err != nil {
			return "", err
		}
		return fmt.Sprintf("SIGKILL %s, restarted as %s", old, a.ID), nil
	case FaultDiskFull:
		took, err := n.c.Fill(target)
		p := n.c.Coords[target]
		n.onHeal(func(context.Context) string {
			n.c.FreeAll()
			if !p.Running() {
				return coordNode(target) + " had exited while its disk was full"
			}
			return "space freed; " + coordNode(target) + " still running"
		})
		return fmt.Sprintf("%s's file system filled (%d bytes)", coordNode(target), took), err
	case FaultDamagedRestart:
		return n.damagedRestart(ctx, f, target)
	case FaultConnBurst:
		bctx, cancel := context.WithCancel(ctx)
		done := make(chan *BurstStats, 1)
		go func() { done <- n.c.Bursts(bctx) }()
		n.onHeal(func(context.Context) string {
			cancel()
			st := <-done
			for _, p := range st.Protocol {
				n.violate("connections", "fresh-connection burst: "+p)
			}
			return st.String()
		})
		return fmt.Sprintf("bursts of %d fresh HTTP/2 clients × %d requests every %s from cl", burstClients, burstConcurrent, burstEvery), nil
	}
	return "", fmt.Errorf("unknown fault kind %q", f.Kind)
}

// damagedRestart kills member target, damages its data dir and starts it:
// it must refuse to start (DamagedExitCode, the file named) or, where the
// damage loses nothing it needs (snapshots/ before any compaction), run
// and catch up. The heal runs the operator's runbook for a refusal.
func (n *Nemesis) damagedRestart(ctx context.Context, f Fault, target int) (string, error) {
	p := n.c.Coords[target]
	// A snapshot first, so the member's log is compacted and the
	// snapshot is needed to start (the log alone no longer holds it all).
	snap := "snapshot taken"
	if err := n.c.SnapshotOn(ctx, target); err != nil {
		snap = "no snapshot (" + err.Error() + ")"
	}
	p.Kill()
	what, err := n.c.Damage(target, f.Damage)
	what = snap + "; " + what
	if err != nil {
		return what, err
	}
	r, err := n.c.StartDamaged(target)
	if err != nil {
		return what, err
	}
	id := coordNode(target)
	switch {
	case r.Running:
		return fmt.Sprintf("%s: %s; it started (nothing it needed was lost)", id, what), nil
	case !r.Refused:
		n.violate("storage", fmt.Sprintf("%s started on a damaged data dir (%s) and exited %d, not %d (damaged data): %s",
			id, what, r.ExitCode, DamagedExitCode, r.Message))
	}
	n.onHeal(func(hctx context.Context) string {
		done, err := n.c.Runbook(hctx, target)
		if err != nil {
			return "runbook failed: " + err.Error()
		}
		return done
	})
	return fmt.Sprintf("%s: %s; refused with exit %d: %s", id, what, r.ExitCode, lastLine(r.Message)), nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Heal removes every partition, continues every process and restarts
// every one that is not running.
func (n *Nemesis) Heal() error {
	_, err := n.heal(context.Background())
	return err
}

// heal runs the current fault's own heal steps, then the common heal; it
// returns what the fault's steps did.
func (n *Nemesis) heal(ctx context.Context) (string, error) {
	n.mu.Lock()
	steps := n.heals
	n.heals = nil
	n.mu.Unlock()
	var did []string
	for _, s := range steps {
		did = append(did, s(ctx))
	}
	return strings.Join(did, "; "), n.commonHeal()
}

func (n *Nemesis) commonHeal() error {
	err := n.c.Net.Heal()
	for _, p := range n.c.Coords {
		_ = p.Signal(syscall.SIGCONT)
	}
	for _, a := range n.c.Agents {
		_ = a.Proc.Signal(syscall.SIGCONT)
	}
	for _, p := range n.c.Coords {
		if !p.Running() {
			if e := p.Start(); e != nil && err == nil {
				err = e
			}
		}
	}
	for _, a := range n.c.Agents {
		if !a.Proc.Running() {
			if e := a.Proc.Start(); e != nil && err == nil {
				err = e
			}
		}
	}
	return err
}

// Run applies the schedule relative to t0 until it ends or ctx is done,
// healing each fault before the next.
func (n *Nemesis) Run(ctx context.Context, t0 time.Time, faults []Fault) {
	for _, f := range faults {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(t0.Add(f.At))):
		}
		a := Applied{Fault: f, Start: time.Now()}
		detail, err := n.start(ctx, f)
		a.Detail = detail
		if err != nil {
			a.Err = err.Error()
		}
		n.log.Info("fault", "fault", f.String(), "detail", detail, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(f.Dur):
		}
		did, err := n.heal(context.Background()) // ctx may have ended: the heal must still run
		if did != "" {
			a.Detail += " | heal: " + did
		}
		if err != nil {
			a.Err += " heal: " + err.Error()
		}
		a.Healed = time.Now()
		n.log.Info("healed", "fault", f.Kind)
		n.mu.Lock()
		n.applied = append(n.applied, a)
		n.mu.Unlock()
	}
}
