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

// TestAdoptedFlashWithoutVersionJudgedByRecord: a component without a
// version in the spec (metal3's HostFirmwareComponents) is done when it
// shows a version other than the one before the flash. The BMC reports
// the flash Completed but keeps the old version; the holder that started
// it is killed mid-flash. The standby adopts the task and, from the
// version before the flash kept in the task record, reports the flash
// failed (a preparation error naming that version) instead of taking the
// BMC's Completed for a success.
func TestAdoptedFlashWithoutVersionJudgedByRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator, bmcsim and two agents")
	}
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--profile", "ilo"}})
	putKnobs(t, e, `{"speed": 2.4, "updateMinutes": 1, "updateOutcome": "no-change"}`)
	h := e.hostSpec("fw1", "r1", 0)
	h.Firmware = []wire.FirmwareComponent{{Component: wire.ComponentBMC, URL: "http://images.example/fw/ilo5_310.bin"}}
	e.apply(h)
	args := []string{"--lease-ttl", "4s", "--poll-interval", "1s"}
	a1 := e.startAgent("r1", "a1", args...)
	a2 := e.startAgent("r1", "a2", args...)
	var before string
	testenv.Eventually(t, 120*time.Second, "the flash at 50%", func() error {
		st, err := e.simState(0)
		if err != nil {
			return err
		}
		var task bmcsim.TaskState
		for _, tk := range st.Tasks {
			if strings.Contains(strings.ToLower(tk.Kind), "update") {
				task = tk
			}
		}
		for _, f := range st.Firmware {
			if f.Name == "iLO 5" {
				before = f.Version
			}
		}
		if task.ID == "" || task.Percent < 50 {
			return fmt.Errorf("task %+v", task)
		}
		if task.State != "Running" && task.State != "New" {
			t.Fatalf("the update ended (%s) before 50%%", task.State)
		}
		return nil
	})
	rec := e.host("fw1").Task
	if rec == nil || rec.FromVersion != before {
		t.Fatalf("task record %+v: want the version before the flash %q in it", rec, before)
	}
	holder := rackHolder(t, e)
	map[string]*testenv.Process{"a1": a1, "a2": a2}[holder].Kill()
	got := e.waitHost("fw1", 180*time.Second, "a preparation error naming the version before the flash", func(h *wire.Host) error {
		st := h.Status
		if st == nil || st.ErrorType != wire.ErrPreparation || !strings.Contains(st.ErrorMessage, "the one before the flash") {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	if !strings.Contains(got.Status.ErrorMessage, fmt.Sprintf("%q", before)) || got.Status.ProvisioningState != wire.StatePreparing {
		t.Errorf("error %q in %s: want it to name %q", got.Status.ErrorMessage, got.Status.ProvisioningState, before)
	}
	if got.Task != nil {
		t.Errorf("task record not ended: %+v", got.Task)
	}
	if h := rackHolder(t, e); h == holder {
		t.Errorf("the killed %s still holds the rack", holder)
	}
}
