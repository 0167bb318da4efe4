package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// StallResult is one measurement of the known limit: BMCs do not check
// epochs, so a mutating request the holder sent inside its lease but held
// on the agent → BMC link arrives whenever the link lets it through.
type StallResult struct {
	TTL   time.Duration `json:"ttl"`
	Stall time.Duration `json:"stall"` // how long mutating requests were held
	// Covered is 2 × margin + the mutation timeout: the stall every request
	// survives, whenever within its lease it was sent (agent/DESIGN.md).
	Covered time.Duration `json:"covered"`
	// Late is, for each request of the old holder that arrived after the
	// hold was lifted, how long it took from the guard letting it through
	// (the agent's audit) to the BMC receiving it, and how much of its
	// epoch was left at arrival (negative: it arrived after the epoch
	// ended and another holder was granted the rack).
	Late       []StallCall `json:"late"`
	Violations []Violation `json:"violations"`
	Dir        string      `json:"dir"`
}

// StallCall is one held request.
type StallCall struct {
	Delay time.Duration `json:"delay"` // BMC arrival − guard start
	Left  time.Duration `json:"left"`  // epoch end − BMC arrival
}

// MeasureStall runs one coordinator, one rack (two agents, one BMC) and
// holds every mutating HTTP request from the active agent to the BMC for
// stall, while cutting the active agent off the coordinator so the standby
// takes over. Then it lifts the hold, lets the held requests arrive, and
// runs the fencing checker.
func MeasureStall(ctx context.Context, dir, bin string, ttl, stall time.Duration) (*StallResult, error) {
	topo := Topology{Coordinators: 1, Racks: []string{"r1"}, HostsPerRack: 1, LeaseTTL: ttl}
	res := &StallResult{TTL: ttl, Stall: stall, Covered: 2*fence.Margin(ttl) + (ttl-fence.Margin(ttl))/2, Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lf, err := os.Create(filepath.Join(dir, "harness.log"))
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	log := slog.New(slog.NewJSONHandler(lf, nil))
	nw, err := NewNet(topo.Nodes())
	if err != nil {
		return nil, err
	}
	defer nw.Close()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	c, err := StartCluster(sctx, dir, bin, nw, topo, log)
	if c != nil {
		defer c.StopAll()
	}
	if err != nil {
		return nil, err
	}
	h := topo.Hosts()[0]
	if _, _, err := c.Observer.ApplyHost(sctx, c.Spec(h, true, InitialTag)); err != nil {
		return nil, err
	}
	if err := c.StartAgents(); err != nil {
		return nil, err
	}
	waitState := func(online bool) error {
		return until(sctx, fmt.Sprintf("host powered %v", online), func() error {
			got, err := c.Observer.GetHost(sctx, h.Name)
			if err != nil {
				return err
			}
			if got.Status == nil || got.Status.ProvisioningState != wire.StateAvailable || got.Status.PoweredOn != online {
				return fmt.Errorf("status %+v", got.Status)
			}
			return nil
		})
	}
	if err := waitState(true); err != nil {
		return nil, err
	}
	// Hold r1a's mutating requests, then ask for a power change: r1a reads
	// the power state (reads pass), sends the power-off, which is held.
	if err := nw.DropMutatingHTTP("r1a", "r1bmc"); err != nil {
		return nil, err
	}
	held := time.Now()
	if _, _, err := c.Observer.ApplyHost(sctx, c.Spec(h, false, "stall")); err != nil {
		return nil, err
	}
	// Let the request go out, then cut r1a off the coordinator: its lease
	// runs out and r1b takes over and powers the host off itself.
	time.Sleep(time.Second)
	if err := nw.Cut([]string{"r1a"}, []string{"c1"}); err != nil {
		return nil, err
	}
	select {
	case <-time.After(time.Until(held.Add(stall))):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Lift the hold only (r1a stays cut off the coordinator): held
	// segments go out at the sender's next retransmission (TCP backoff
	// doubles: 0.2, 0.6, 1.4, 3.0, 6.2, 12.6 s … after the send).
	if err := nw.HealNode("r1bmc"); err != nil {
		return nil, err
	}
	_ = until(sctx, "a held request of r1a at the BMC", func() error {
		lines, err := bmcsim.ReadAudit(c.AuditFile("r1"))
		if err != nil {
			return err
		}
		for _, l := range lines {
			if at, _ := time.Parse(time.RFC3339Nano, l.Time); at.After(held) && strings.Contains(l.UserAgent, "(r1a-1;") {
				return nil
			}
		}
		return fmt.Errorf("none yet")
	})
	// Keep r1a cut off until the standby holds the rack, so its epoch
	// ends by expiry and the held request is judged against that end.
	_ = until(sctx, "r1b holding the rack", func() error {
		l, err := c.Observer.Racks(sctx)
		if err != nil {
			return err
		}
		for _, r := range l.Items {
			if r.Name == "r1" && r.Holder == "r1b-1" {
				return nil
			}
		}
		return fmt.Errorf("not yet")
	})
	time.Sleep(time.Second)
	if err := nw.Heal(); err != nil {
		return nil, err
	}
	for _, a := range c.Agents {
		a.Proc.Stop(15 * time.Second)
	}
	recs, err := c.Observer.LeaseHistory(sctx, "r1")
	if err != nil {
		return nil, err
	}
	lines, err := bmcsim.ReadAudit(c.AuditFile("r1"))
	if err != nil {
		return nil, err
	}
	muts, err := Mutations("r1", lines)
	if err != nil {
		return nil, err
	}
	res.Violations = CheckFencing(map[string][]wire.LeaseRecord{"r1": recs.Items}, muts)
	_ = writeJSON(filepath.Join(dir, "leases.json"), recs.Items)
	_ = writeJSON(filepath.Join(dir, "mutations.json"), muts)
	// Pair r1a's held calls (guard start) with their arrival.
	starts, err := guardStarts(filepath.Join(dir, "guard-r1a-1.jsonl"), held)
	if err != nil {
		return nil, err
	}
	ends := map[uint64]time.Time{}
	for _, r := range recs.Items {
		if r.EndedAt != nil {
			ends[r.Epoch] = *r.EndedAt
		}
	}
	i := 0
	for _, m := range muts {
		if m.Agent != "r1a-1" || m.At.Before(held) || i >= len(starts) {
			continue
		}
		sc := StallCall{Delay: m.At.Sub(starts[i])}
		if e, ok := ends[m.Epoch]; ok {
			sc.Left = e.Sub(m.At)
		}
		res.Late = append(res.Late, sc)
		i++
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	_ = os.WriteFile(filepath.Join(dir, "stall.json"), append(b, '\n'), 0o644)
	return res, nil
}

// guardStarts returns the start times of the calls the guard let through
// (not refused) after since, in order.
func guardStarts(path string, since time.Time) ([]time.Time, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var r struct {
			Start   time.Time `json:"start"`
			Outcome string    `json:"outcome"`
		}
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if r.Start.After(since) && !strings.HasPrefix(r.Outcome, "refused") {
			out = append(out, r.Start)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out, nil
}
