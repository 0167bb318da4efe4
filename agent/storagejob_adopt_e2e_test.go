package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestStorageJobFailover: a RAID volume built through a PERC job and a
// disk erase (bmcsim idrac profile) each run for about 25 s of wall time;
// the agent that started the job is killed in the middle of it. The
// standby takes the rack over, finds the job recorded on the host and
// follows it to its end: the BMC saw exactly one volume create / one
// secure erase per drive, no power change while a job ran (the operator
// flips the power wish meanwhile: it waits), the record is ended and the
// host ends available (with its volume / with every drive erased once).
func TestStorageJobFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator, bmcsim and two agents per case")
	}
	t.Run("raid", storageJobRAIDFailover)
	t.Run("erase", storageJobEraseFailover)
}

var storageJobAgentArgs = []string{"--lease-ttl", "4s", "--poll-interval", "1s"}

func storageJobRAIDFailover(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--profile", "idrac"}})
	// 1 simulated minute at speed 2.4: the volume's job takes 25 s.
	putKnobs(t, e, `{"speed": 2.4, "jobMinutes": 1}`)
	name := "raid0"
	h := prepHost(e, name, "idrac")
	h.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1", Controller: "RAID.Integrated.1-1"}}}
	e.apply(h)
	a1 := e.startAgent("r1", "a1", storageJobAgentArgs...)
	a2 := e.startAgent("r1", "a2", storageJobAgentArgs...)
	task := waitSimTask(t, e, bmcsim.TaskVolumeCreate, "", 30)
	wantOn := killHolderMidJob(t, e, name, wire.BMCTaskRAID, task, a1, a2)

	got := e.waitHost(name, 180*time.Second, "the volume built, the record ended, available", func(h *wire.Host) error {
		if h.Task != nil {
			return fmt.Errorf("task still recorded: %+v", h.Task)
		}
		if h.Status == nil || h.Status.ProvisioningState != wire.StateAvailable || h.Status.ErrorType != "" || h.Status.Extra["raid"] == "" {
			return fmt.Errorf("status %+v", h.Status)
		}
		if h.Status.PoweredOn != wantOn {
			return fmt.Errorf("powered on %t, want %t once the job ended", h.Status.PoweredOn, wantOn)
		}
		return nil
	})
	if d := got.Status.DayTwo; d == nil || len(d.HardwareRAIDVolumes) != 1 || d.HardwareRAIDVolumes[0].Level != "1" {
		t.Errorf("status.dayTwo %+v: want one RAID1 volume", d)
	}
	st, err := e.simState(0)
	if err != nil {
		t.Fatal(err)
	}
	checkVolumes(t, st, "RAID1", 1)
	creates := 0
	for _, l := range e.auditLines(0) {
		if l.Method == "POST" && strings.HasSuffix(l.Path, "/Volumes") {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("%d volume creates sent to the BMC, want exactly 1", creates)
	}
	checkNoResetDuring(t, e, st, bmcsim.TaskVolumeCreate)
	checkTaskEvents(t, e, name)
}

func storageJobEraseFailover(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--profile", "idrac"}})
	putKnobs(t, e, `{"speed": 600}`)
	name := "erase0"
	h := prepHost(e, name, "idrac")
	h.AutomatedCleaningMode = wire.CleaningMetadata
	h.Image = &wire.Image{URL: "http://images.example/ubuntu.iso"}
	e.apply(h)
	a1 := e.startAgent("r1", "a1", storageJobAgentArgs...)
	a2 := e.startAgent("r1", "a2", storageJobAgentArgs...)
	e.waitHost(name, 120*time.Second, "provisioned", stateIs(wire.StateProvisioned, wire.OpOK))
	// Each drive's secure erase takes 25 s; the holder is killed in the
	// middle of the second one.
	putKnobs(t, e, `{"speed": 2.4, "eraseMinutes": 1}`)
	h = e.host(name)
	h.Image = nil
	e.apply(h)
	first := waitSimTask(t, e, bmcsim.TaskErase, "", 0)
	task := waitSimTask(t, e, bmcsim.TaskErase, first.Target, 30)
	wantOn := killHolderMidJob(t, e, name, wire.BMCTaskErase, task, a1, a2)

	got := e.waitHost(name, 180*time.Second, "every drive erased, the record ended, available", func(h *wire.Host) error {
		if h.Task != nil {
			return fmt.Errorf("task still recorded: %+v", h.Task)
		}
		if h.Status == nil || h.Status.ProvisioningState != wire.StateAvailable || h.Status.ErrorType != "" {
			return fmt.Errorf("status %+v", h.Status)
		}
		if h.Status.PoweredOn != wantOn {
			return fmt.Errorf("powered on %t, want %t once the erase ended", h.Status.PoweredOn, wantOn)
		}
		return nil
	})
	if le := got.Status.DayTwo; le == nil || le.LastErase == nil || len(le.LastErase.Disks) != 2 {
		t.Errorf("status.dayTwo.lastErase %+v: want both PERC drives", got.Status.DayTwo)
	}
	st, err := e.simState(0)
	if err != nil {
		t.Fatal(err)
	}
	perDrive := map[string]int{}
	for _, l := range e.auditLines(0) {
		if l.Method == "POST" && strings.HasSuffix(l.Path, "/Actions/Drive.SecureErase") {
			perDrive[strings.TrimSuffix(l.Path, "/Actions/Drive.SecureErase")]++
		}
	}
	for _, d := range st.Drives {
		if strings.Contains(d.Path, "RAID.Integrated") && (d.Erased != 1 || perDrive[d.Path] != 1) {
			t.Errorf("drive %s: %d secure erases sent, %d completed; want exactly 1 of each", d.Path, perDrive[d.Path], d.Erased)
		}
	}
	checkNoResetDuring(t, e, st, bmcsim.TaskErase)
	checkTaskEvents(t, e, name)
}

// waitSimTask waits for a task of kind (on another target than not)
// running at percent or more, and returns it.
func waitSimTask(t *testing.T, e *env, kind, not string, percent int) bmcsim.TaskState {
	t.Helper()
	var task bmcsim.TaskState
	testenv.Eventually(t, 180*time.Second, fmt.Sprintf("a %s task at %d%%", kind, percent), func() error {
		st, err := e.simState(0)
		if err != nil {
			return err
		}
		task = bmcsim.TaskState{}
		for _, tk := range st.Tasks {
			if tk.Kind == kind && (not == "" || tk.Target != not) {
				task = tk
			}
		}
		switch {
		case task.ID == "":
			return fmt.Errorf("no %s task yet (tasks %+v)", kind, st.Tasks)
		case task.State != "Running" && task.State != "New":
			t.Fatalf("the %s task ended (%s) before %d%%: make it slower", kind, task.State, percent)
		case task.Percent < percent:
			return fmt.Errorf("at %d%%", task.Percent)
		}
		return nil
	})
	return task
}

// killHolderMidJob checks the job is recorded on the host, kills the
// rack's holder and flips the host's power wish (which must wait for the
// job); it returns the power wished.
func killHolderMidJob(t *testing.T, e *env, name, kind string, task bmcsim.TaskState, agents ...*testenv.Process) bool {
	t.Helper()
	rec := e.host(name).Task
	if rec == nil || rec.Kind != kind {
		t.Errorf("task record %+v while the BMC runs %s %s: want a %s record", rec, task.ID, task.Target, kind)
		rec = &wire.BMCTask{}
	}
	holder := rackHolder(t, e)
	var killed *testenv.Process
	for i, a := range agents {
		if holder == fmt.Sprintf("a%d", i+1) {
			killed = a
		}
	}
	if killed == nil {
		t.Fatalf("rack held by %q", holder)
	}
	killed.Kill()
	spec := e.host(name)
	spec.Online = spec.Status == nil || !spec.Status.PoweredOn
	e.apply(spec)
	t.Logf("killed %s at %d%% of task %s on %s (record %s, epoch %d)", holder, task.Percent, task.ID, task.Target, rec.TaskURI, rec.Epoch)
	t.Cleanup(func() {
		if h := rackHolder(t, e); h == holder {
			t.Errorf("the killed %s still holds the rack", holder)
		}
	})
	return spec.Online
}

// checkNoResetDuring: no ComputerSystem.Reset reached the BMC while a
// task of kind ran.
func checkNoResetDuring(t *testing.T, e *env, st bmcsim.State, kind string) {
	t.Helper()
	for _, tk := range st.Tasks {
		if tk.Kind != kind {
			continue
		}
		start, err1 := time.Parse(time.RFC3339Nano, tk.Start)
		end, err2 := time.Parse(time.RFC3339Nano, tk.End)
		if err1 != nil || err2 != nil {
			t.Errorf("task %s %s: start %q end %q", tk.ID, tk.State, tk.Start, tk.End)
			continue
		}
		for _, l := range e.auditLines(0) {
			at, err := time.Parse(time.RFC3339Nano, l.Time)
			if err == nil && strings.Contains(l.Path, "ComputerSystem.Reset") && at.After(start) && at.Before(end) {
				t.Errorf("power change while task %s (%s of %s) ran: %s %s %s (%s)", tk.ID, kind, tk.Target, l.Method, l.Path, l.Body, l.UserAgent)
			}
		}
	}
}

func checkTaskEvents(t *testing.T, e *env, name string) {
	t.Helper()
	evs, err := e.admin.Events(ctx(t), name)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, ev := range evs.Items {
		seen[ev.Reason]++
	}
	for _, r := range []string{wire.ReasonBMCTaskStarted, wire.ReasonBMCTaskAdopted, wire.ReasonBMCTaskEnded} {
		if seen[r] == 0 {
			t.Errorf("no %s event (events %v)", r, seen)
		}
	}
}
