package agent_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestFirmwareUpdateFailover: a flash of the iLO's own firmware (bmcsim
// ilo profile, a power change mid-flash bricks the board) runs for about
// 25 s of wall time; the agent that started it is killed -9 at a given
// share of it. The standby takes the rack over, adopts the recorded task
// and follows it to its end: the BMC saw exactly one update, no power
// change while it ran, the board is not bricked, the inventory shows the
// new version and the record is ended.
func TestFirmwareUpdateFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator, bmcsim and two agents")
	}
	for _, at := range []int{10, 50, 90} {
		t.Run(fmt.Sprintf("kill at %d%%", at), func(t *testing.T) { firmwareFailover(t, at, false) })
	}
	// A partition of the holder (SIGSTOP: it stops renewing, as one cut
	// off from the coordinator), healed once the standby adopted the task:
	// the old holder wakes up fenced and touches neither the BMC nor the
	// record.
	t.Run("pause at 50%", func(t *testing.T) { firmwareFailover(t, 50, true) })
}

func firmwareFailover(t *testing.T, killAt int, pause bool) {
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--profile", "ilo"}})
	// 1 simulated minute at speed 2.4: the flash takes 25 s of wall time.
	putKnobs(t, e, `{"speed": 2.4, "updateMinutes": 1, "brickOnPowerChange": true}`)
	h := e.hostSpec("fw0", "r1", 0)
	h.Firmware = []wire.FirmwareComponent{{Component: wire.ComponentBMC, URL: "http://images.example/fw/ilo5_310.bin", Version: "ilo5_310"}}
	e.apply(h)
	agentArgs := []string{"--lease-ttl", "4s", "--poll-interval", "1s"}
	a1 := e.startAgent("r1", "a1", agentArgs...)
	a2 := e.startAgent("r1", "a2", agentArgs...)

	// Wait for the flash to reach killAt percent, then kill its holder.
	var task bmcsim.TaskState
	testenv.Eventually(t, 120*time.Second, fmt.Sprintf("the flash at %d%%", killAt), func() error {
		st, err := e.simState(0)
		if err != nil {
			return err
		}
		for _, tk := range st.Tasks {
			if tk.Kind == "update" || strings.Contains(strings.ToLower(tk.Kind), "update") {
				task = tk
			}
		}
		if task.ID == "" {
			return fmt.Errorf("no update task yet (tasks %+v)", st.Tasks)
		}
		if task.State != "Running" && task.State != "New" {
			t.Fatalf("the update ended (%s) before %d%%: make it slower", task.State, killAt)
		}
		if task.Percent < killAt {
			return fmt.Errorf("at %d%%", task.Percent)
		}
		return nil
	})
	holder := rackHolder(t, e)
	killed := map[string]*testenv.Process{"a1": a1, "a2": a2}[holder]
	if killed == nil {
		t.Fatalf("rack held by %q", holder)
	}
	rec := e.host("fw0").Task
	if rec == nil {
		t.Fatalf("no task recorded on the host while the BMC flashes (task %+v)", task)
	}
	var resumedAt time.Time
	if pause {
		if err := killed.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		e.waitHost("fw0", 120*time.Second, "the task adopted by the standby", func(h *wire.Host) error {
			if h.Task == nil || h.Task.AdoptedEpoch == 0 {
				return fmt.Errorf("task %+v", h.Task)
			}
			return nil
		})
		if err := killed.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		resumedAt = time.Now()
	} else {
		killed.Kill()
	}
	// The operator flips the power wish while the flash runs: it waits
	// for the flash to end.
	spec := e.host("fw0")
	spec.Online = spec.Status == nil || !spec.Status.PoweredOn
	wantOn := spec.Online
	e.apply(spec)
	verb := "killed"
	if pause {
		verb = "paused, then resumed"
	}
	t.Logf("%s %s at %d%% of the flash (task %s, record %s epoch %d)", verb, holder, task.Percent, task.ID, rec.TaskURI, rec.Epoch)

	final := e.waitHost("fw0", 180*time.Second, "firmware updated, record ended, back to available", func(h *wire.Host) error {
		if h.Task != nil {
			return fmt.Errorf("task still recorded: %+v", h.Task)
		}
		if h.Status == nil || h.Status.ProvisioningState != wire.StateAvailable || h.Status.ErrorType != "" {
			return fmt.Errorf("status %+v", h.Status)
		}
		if h.Status.Extra["firmware"] == "" {
			return fmt.Errorf("firmware not marked done: %v", h.Status.Extra)
		}
		if h.Status.PoweredOn != wantOn {
			return fmt.Errorf("powered on %t, want %t after the flash", h.Status.PoweredOn, wantOn)
		}
		return nil
	})
	if holder2 := rackHolder(t, e); holder2 == holder {
		t.Errorf("rack still held by the killed %s", holder)
	}
	_ = final
	powerChanges := 0

	// The BMC's side.
	st, err := e.simState(0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bricked {
		t.Errorf("board bricked")
	}
	got := ""
	for _, f := range st.Firmware {
		if f.Name == "iLO 5" {
			got = f.Version
		}
	}
	if got != "ilo5_310" {
		t.Errorf("iLO 5 firmware at %q, want ilo5_310 (inventory %+v)", got, st.Firmware)
	}
	started := 0
	for _, l := range e.auditLines(0) {
		if l.UpdateRunning != "" {
			t.Errorf("power change while the update ran: %s %s (%s)", l.Method, l.Path, l.UserAgent)
		}
		if strings.Contains(l.Path, "ComputerSystem.Reset") {
			powerChanges++
		}
		if l.Task != "" && strings.Contains(l.Path, "Update") {
			started++
		}
	}
	if powerChanges == 0 {
		var paths []string
		for _, l := range e.auditLines(0) {
			paths = append(paths, l.Method+" "+l.Path+" "+l.Body)
		}
		t.Errorf("no power change at all: the online flip was never carried out (audit %q)", paths)
	}
	if pause {
		// After SIGCONT the old holder must not change anything on the
		// BMC (the audit holds the mutating calls).
		for _, l := range e.auditLines(0) {
			at, err := time.Parse(time.RFC3339Nano, l.Time)
			if err == nil && at.After(resumedAt) && strings.Contains(l.UserAgent, "("+holder+";") {
				t.Errorf("the paused holder %s changed the BMC after it woke up: %s %s", holder, l.Method, l.Path)
			}
		}
	}
	if started != 1 {
		t.Errorf("%d updates started, want exactly 1", started)
	}
	evs, err := e.admin.Events(ctx(t), "fw0")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ev := range evs.Items {
		seen[ev.Reason]++
	}
	for _, r := range []string{wire.ReasonBMCTaskStarted, wire.ReasonBMCTaskAdopted, wire.ReasonBMCTaskEnded, "FirmwareUpdated"} {
		if seen[r] == 0 {
			t.Errorf("no %s event (events %v)", r, seen)
		}
	}
}

func putKnobs(t *testing.T, e *env, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("http://127.0.0.1:%d/sim/knobs", e.s.Base), strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&b)
		t.Fatalf("PUT /sim/knobs: %d %s", resp.StatusCode, b)
	}
}

func rackHolder(t *testing.T, e *env) string {
	t.Helper()
	l, err := e.admin.Racks(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range l.Items {
		if r.Name == "r1" {
			return r.Holder
		}
	}
	return ""
}
