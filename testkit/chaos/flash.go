package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand"
	"net/http"

	"path/filepath"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// Firmware flash faults (--faults firmware, and in all): one rack whose
// lease holder is flashing a BMC (bmcsim's ilo profile, a flash of
// FlashMinutes simulated minutes; a power change mid-flash bricks the
// board) is killed, or cut off every coordinator, at a drawn share of the
// flash. The checker reads the BMC's audit: exactly one update started,
// no power change while it ran, the board not bricked, the inventory at
// the new version and the task finished by the rack's next holder.
const (
	FaultFlashKill      = "flash-kill-agent"      // SIGKILL the flashing holder, restart it once the standby adopted the task
	FaultFlashPartition = "flash-partition-agent" // cut the flashing holder off every coordinator, heal once the standby adopted the task
	FaultsFirmware      = "firmware"              // the flash scenario (FirmwareFaultKinds), one per seed
)

// FirmwareFaultKinds are the flash faults.
var FirmwareFaultKinds = []string{FaultFlashKill, FaultFlashPartition}

// FlashShares are the points of a flash a fault hits (percent done).
var FlashShares = []int{10, 50, 90}

// FlashPlan is what a seed draws for the flash scenario: the fault and
// the share of the flash it hits at.
func FlashPlan(seed int64) (kind string, at int) {
	rng := rand.New(rand.NewSource(seed))
	return FirmwareFaultKinds[rng.Intn(len(FirmwareFaultKinds))], FlashShares[rng.Intn(len(FlashShares))]
}

// Flash timing: 1 simulated minute at speed 6 is a 10 s flash of wall
// time, longer than the agents' 5 s lease TTL so a take-over can land
// inside it.
const (
	flashMinutes = 1
	flashSpeed   = 6
	flashVersion = "ilo5_310"
)

// FlashCheck is what the flash checker read from the BMC's side.
type FlashCheck struct {
	Updates             int    `json:"updates"`             // updates the BMC accepted
	PowerChangesInFlash int    `json:"powerChangesInFlash"` // power changes while one ran
	Bricked             bool   `json:"bricked"`
	Version             string `json:"version"` // iLO 5 after the run
	Adopted             bool   `json:"adopted"` // a BMCTaskAdopted event
	Ended               string `json:"ended"`   // the BMCTaskEnded event's message
}

// CheckFlash turns what the flash's BMC and host show into violations of
// the "firmware" checker.
func CheckFlash(fc FlashCheck, hit string) []Violation {
	var out []Violation
	v := func(format string, a ...any) {
		out = append(out, Violation{Checker: "firmware", What: hit + ": " + fmt.Sprintf(format, a...)})
	}
	if fc.Updates != 1 {
		v("the BMC accepted %d firmware updates, want exactly 1", fc.Updates)
	}
	if fc.PowerChangesInFlash > 0 {
		v("%d power changes reached the BMC while its flash ran", fc.PowerChangesInFlash)
	}
	if fc.Bricked {
		v("the board is bricked")
	}
	if fc.Version != flashVersion {
		v("the BMC's firmware is at %q after the run, want %s", fc.Version, flashVersion)
	}
	if !fc.Adopted {
		v("the rack's next holder never adopted the task (no BMCTaskAdopted event)")
	}
	if !strings.Contains(fc.Ended, ") "+wire.BMCTaskSucceeded) {
		v("the task record did not end succeeded: %q", fc.Ended)
	}
	return out
}

// runFlash is Run for FaultsFirmware: a three-member cluster, one rack of
// one host on an ilo BMC, both agents; the host's BMC is flashed and the
// drawn fault hits its holder at the drawn share.
func runFlash(ctx context.Context, cfg Config, log *slog.Logger, res *Result) error {
	kind, at := FlashPlan(cfg.Seed)
	topo := Topology{Coordinators: 3, Racks: []string{"r1"}, HostsPerRack: 1, LeaseTTL: 5 * time.Second, SimArgs: []string{"--profile", "ilo"}}
	if err := writeJSON(filepath.Join(cfg.Dir, "schedule.json"), map[string]any{"kind": kind, "at": at}); err != nil {
		return err
	}
	nw, err := NewNet(topo.Nodes())
	if err != nil {
		return err
	}
	defer nw.Close()
	rctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	c, err := StartCluster(rctx, cfg.Dir, cfg.Bin, nw, topo, log)
	if c != nil {
		defer c.StopAll()
	}
	if err != nil {
		return fmt.Errorf("start cluster: %w", err)
	}
	h := topo.Hosts()[0]
	if err := putSimKnobs(rctx, c.SimKnobsURL(h.Rack, h.Index), fmt.Sprintf(`{"speed": %d, "updateMinutes": %d, "brickOnPowerChange": true}`, flashSpeed, flashMinutes)); err != nil {
		return err
	}
	spec := c.Spec(h, true, InitialTag)
	spec.Firmware = []wire.FirmwareComponent{{Component: wire.ComponentBMC, URL: "http://images.invalid/fw/" + flashVersion + ".bin", Version: flashVersion}}
	// A day-two spec is a body version every voter must apply: the
	// joined members record theirs a moment after they join.
	if err := until(withTimeout(rctx, time.Minute), "host "+h.Name+" created", func() error {
		_, _, err := c.Observer.ApplyHost(rctx, spec)
		return err
	}); err != nil {
		return err
	}
	if err := c.StartAgents(); err != nil {
		return err
	}
	// The flash reaches the drawn share.
	if err := until(rctx, fmt.Sprintf("the flash at %d%%", at), func() error {
		st, err := simState(rctx, c.SimStateURL(h.Rack, h.Index))
		if err != nil {
			return err
		}
		for _, t := range st.Tasks {
			if t.Kind == bmcsim.TaskUpdate && t.Percent >= at {
				return nil
			}
		}
		return fmt.Errorf("tasks %+v", st.Tasks)
	}); err != nil {
		return err
	}
	nem := NewNemesis(c, log)
	a := nem.holder(rctx, h.Rack)
	hit := fmt.Sprintf("%s of %s at %d%% of the flash", kind, a.ID, at)
	switch kind {
	case FaultFlashKill:
		a.Proc.Kill()
	default:
		if err := nw.Cut([]string{a.Rack + a.Slot}, nem.coordNodes()); err != nil {
			return err
		}
	}
	res.Faults[kind]++
	log.Info("flash fault", "hit", hit)
	// The operator flips the power wish mid-flash: it must wait for the
	// flash to end.
	cur, err := c.Observer.GetHost(rctx, h.Name)
	if err != nil {
		return err
	}
	wantOn := cur.Status == nil || !cur.Status.PoweredOn
	cur.Online = wantOn
	if _, _, err := c.Observer.ApplyHost(rctx, cur); err != nil {
		return err
	}
	// Heal once the standby adopted the task (or after a bound).
	_ = until(withTimeout(rctx, 60*time.Second), "the task adopted", func() error {
		got, err := c.Observer.GetHost(rctx, h.Name)
		if err != nil {
			return err
		}
		if got.Task != nil && got.Task.AdoptedEpoch != 0 || got.Task == nil && got.Status != nil &&
			got.Status.ProvisioningState != wire.StateServicing && got.Status.ProvisioningState != wire.StatePreparing {
			return nil
		}
		return fmt.Errorf("task %+v", got.Task)
	})
	heal := "restarted " + a.ID
	if kind == FaultFlashKill {
		err = a.Proc.Start()
	} else {
		heal, err = "partition healed", nw.Heal()
	}
	if err != nil {
		return err
	}
	res.FaultLog = append(res.FaultLog, hit+"; "+heal)
	// The flash ends, the record is ended, the host is back to available
	// with the power it was asked for.
	if err := until(withTimeout(rctx, 3*time.Minute), "firmware updated, record ended, power as asked", func() error {
		got, err := c.Observer.GetHost(rctx, h.Name)
		if err != nil {
			return err
		}
		if got.Task != nil || got.Status == nil || got.Status.ProvisioningState != wire.StateAvailable || got.Status.Extra["firmware"] == "" || got.Status.PoweredOn != wantOn {
			return fmt.Errorf("task %+v status %+v", got.Task, got.Status)
		}
		return nil
	}); err != nil {
		res.Violations = append(res.Violations, Violation{Checker: "liveness", What: hit + ": " + err.Error()})
	}
	fc := FlashCheck{}
	lines, err := bmcsim.ReadAudit(c.AuditFile(h.Rack))
	if err != nil {
		return err
	}
	for _, l := range lines {
		if l.Task != "" && strings.Contains(l.Path, "Update") {
			fc.Updates++
		}
		if l.UpdateRunning != "" && strings.Contains(l.Path, "Reset") {
			fc.PowerChangesInFlash++
		}
	}
	res.Mutations = len(lines)
	st, err := simState(rctx, c.SimStateURL(h.Rack, h.Index))
	if err != nil {
		return err
	}
	fc.Bricked = st.Bricked
	for _, f := range st.Firmware {
		if f.Name == "iLO 5" {
			fc.Version = f.Version
		}
	}
	evs, err := c.Observer.Events(rctx, h.Name)
	if err != nil {
		return err
	}
	for _, e := range evs.Items {
		switch e.Reason {
		case wire.ReasonBMCTaskAdopted:
			fc.Adopted = true
		case wire.ReasonBMCTaskEnded:
			fc.Ended = e.Message
		}
	}
	if err := writeJSON(filepath.Join(cfg.Dir, "flash.json"), fc); err != nil {
		return err
	}
	res.Violations = append(res.Violations, CheckFlash(fc, hit)...)
	return nil
}

func withTimeout(ctx context.Context, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(ctx, d)
	go func() { <-c.Done(); cancel() }()
	return c
}

func putSimKnobs(ctx context.Context, url, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: %s", url, resp.Status)
	}
	return nil
}

func simState(ctx context.Context, url string) (bmcsim.State, error) {
	var st bmcsim.State
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// RunFlash runs the flash scenario of cfg.Seed (FlashPlan) in cfg.Dir and
// checks it: the "firmware" checker over the BMC's audit, and liveness
// (the host back to available with its firmware and power as asked).
func RunFlash(ctx context.Context, cfg Config) (*Result, error) {
	log, done, err := openRunDir(cfg)
	if err != nil {
		return nil, err
	}
	defer done()
	res := &Result{Seed: cfg.Seed, Duration: "flash", Dir: cfg.Dir, Faults: map[string]int{}, OpsByResult: map[string]int{},
		OpsByKind: map[string]int{}, ByChecker: map[string]int{}, Converge: map[string]int64{}}
	if err := runFlash(ctx, cfg, log, res); err != nil {
		return nil, err
	}
	for _, v := range res.Violations {
		res.ByChecker[v.Checker]++
	}
	return res, writeJSON(filepath.Join(cfg.Dir, "result.json"), res)
}
