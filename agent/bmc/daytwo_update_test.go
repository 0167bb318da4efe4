package bmc

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// imageServer serves any path as a small firmware image (what a
// multipart push fetches).
func imageServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("firmware image " + r.URL.Path))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A flash on each vendor's shape: the inventory, SimpleUpdate (iLO, iDRAC)
// or the multipart push (OpenBMC, which offers only that), the task, and
// done only once the inventory shows the new version. Simulated time: a
// 15-minute flash takes 0.3 s.
func TestDayTwoFirmwareUpdate(t *testing.T) {
	img := imageServer(t)
	for _, tc := range []struct {
		profile, component, method, was string
	}{
		{"ilo", "System ROM", "SimpleUpdate", "U46 v1.72 (09/22/2022)"},
		{"idrac", "Installed-159-1.10.2", "SimpleUpdate", "1.10.2"},
		{"openbmc", "/redfish/v1/UpdateService/FirmwareInventory/bios_active", "MultipartHttpPush", "YV35CL.2023.04.1"},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			r := startDayTwo(t, tc.profile, bmcsim.Knobs{Speed: 3000})
			ctx := testCtx(t)
			inv, err := r.c.FirmwareInventory(ctx)
			if err != nil || len(inv) != len(r.sim.State(0).Firmware) {
				t.Fatalf("FirmwareInventory = %+v, %v", inv, err)
			}
			it, ok := findItem(inv, tc.component)
			if !ok || it.Version != tc.was || !it.Updateable || len(it.RelatedItems) != 1 {
				t.Fatalf("item %s = %+v (found %v)", tc.component, it, ok)
			}
			u, err := r.c.StartUpdate(ctx, r.g, "h0", UpdateRequest{Component: tc.component, ImageURL: img.URL + "/fw/bios-9.9.bin", Version: "bios-9.9"})
			if err != nil {
				t.Fatalf("StartUpdate: %v", err)
			}
			if u.Method != tc.method || u.Task == "" || u.FromVersion != tc.was || u.Component != it.URI {
				t.Fatalf("StartUpdate = %+v; want method %s with a task", u, tc.method)
			}
			lines := r.mutations(t)
			if last := lines[len(lines)-1]; last.Method != "POST" || last.Status != http.StatusAccepted || !strings.Contains(last.UserAgent, "epoch=7") {
				t.Fatalf("the update request = %+v", last)
			}
			got, err := r.c.FinishUpdate(ctx, u, time.Minute)
			if err != nil || got.Version != "bios-9.9" {
				t.Fatalf("FinishUpdate = %+v, %v", got, err)
			}
			st, err := r.c.Task(ctx, u.Task)
			if err != nil || !st.Succeeded() || st.Percent != 100 {
				t.Fatalf("task after = %+v, %v", st, err)
			}
		})
	}
}

// What a flash can do wrong, on the iLO shape: fail (the task ends in
// Exception), report success with the old version still there, hang
// (bounded by the caller's timeout; a second update is refused meanwhile),
// the BMC rebooting itself mid-flash (connection refused: transient, then
// recovery) and 5xx answers during the task.
func TestDayTwoFirmwareFaults(t *testing.T) {
	img := imageServer(t)
	req := UpdateRequest{Component: "2", ImageURL: img.URL + "/U46_v1.80.bin", Version: "U46_v1.80"}
	t.Run("fail", func(t *testing.T) {
		r := startDayTwo(t, "ilo", bmcsim.Knobs{Speed: 3000, UpdateOutcome: bmcsim.OutcomeFail})
		ctx := testCtx(t)
		u, err := r.c.StartUpdate(ctx, r.g, "h0", req)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.c.FinishUpdate(ctx, u, time.Minute)
		if !errors.Is(err, errclass.ErrFailed) || errors.Is(err, ErrUpdateNotApplied) || !strings.Contains(err.Error(), "ended Exception") ||
			!strings.Contains(err.Error(), "Update.1.0.ApplyFailed") {
			t.Fatalf("failed flash: %v", err)
		}
	})
	t.Run("success with the old version", func(t *testing.T) {
		r := startDayTwo(t, "ilo", bmcsim.Knobs{Speed: 3000, UpdateOutcome: bmcsim.OutcomeNoChange})
		ctx := testCtx(t)
		u, err := r.c.StartUpdate(ctx, r.g, "h0", req)
		if err != nil {
			t.Fatal(err)
		}
		it, err := r.c.FinishUpdate(ctx, u, time.Minute)
		if !errors.Is(err, ErrUpdateNotApplied) || !errors.Is(err, errclass.ErrFailed) ||
			!strings.Contains(err.Error(), "flash reported success (task 1 Completed) but UpdateService/FirmwareInventory/2 still shows version U46 v1.72 (09/22/2022) (expected U46_v1.80)") {
			t.Fatalf("no-change flash: %+v, %v", it, err)
		}
		// Without an expected version: any version but the old one.
		u.Version = ""
		if _, err := r.c.FinishUpdate(ctx, u, time.Minute); !errors.Is(err, ErrUpdateNotApplied) || !strings.Contains(err.Error(), "expected any other than U46 v1.72") {
			t.Fatalf("no-change flash, no version given: %v", err)
		}
	})
	t.Run("hang and a second update", func(t *testing.T) {
		r := startDayTwo(t, "ilo", bmcsim.Knobs{Speed: 3000, UpdateOutcome: bmcsim.OutcomeHang})
		ctx := testCtx(t)
		u, err := r.c.StartUpdate(ctx, r.g, "h0", req)
		if err != nil {
			t.Fatal(err)
		}
		// The same item reads Updating: refused before anything is sent.
		if _, err := r.c.StartUpdate(ctx, r.g, "h0", req); !errors.Is(err, ErrUpdateInProgress) || !errors.Is(err, errclass.ErrTransient) {
			t.Fatalf("second update of the same item: %v", err)
		}
		// Another item: the BMC refuses it, and says why.
		other := UpdateRequest{Component: "iLO 5", ImageURL: img.URL + "/ilo5_310.bin"}
		if _, err := r.c.StartUpdate(ctx, r.g, "h0", other); !errors.Is(err, ErrUpdateInProgress) ||
			!strings.Contains(err.Error(), "the BMC refused the update of iLO 5: Update.1.0.UpdateInProgress: An update is in progress: task 1") {
			t.Fatalf("second update of another item: %v", err)
		}
		start := time.Now()
		_, err = r.c.FinishUpdate(ctx, u, 500*time.Millisecond)
		if !errors.Is(err, ErrTaskRunning) || !strings.Contains(err.Error(), "Running at 50%") || !strings.Contains(err.Error(), "do not power-cycle") {
			t.Fatalf("hung flash: %v", err)
		}
		if el := time.Since(start); el > 30*time.Second {
			t.Fatalf("FinishUpdate took %v with a 500ms timeout", el)
		}
		if st := r.sim.State(0); st.Bricked || len(st.Tasks) != 1 || st.Tasks[0].State != "Running" {
			t.Fatalf("BMC state after a bounded wait: %+v", st.Tasks)
		}
	})
	t.Run("BMC reboots itself", func(t *testing.T) {
		// A 15-minute flash in 1.5 s; at its middle the BMC is off the
		// network for 5 simulated minutes (0.5 s).
		r := startDayTwo(t, "ilo", bmcsim.Knobs{Speed: 600, RebootMinutes: 5})
		ctx := testCtx(t)
		u, err := r.c.StartUpdate(ctx, r.g, "h0", req)
		if err != nil {
			t.Fatal(err)
		}
		var readErr error
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, readErr = r.c.Task(ctx, u.Task); readErr != nil {
				break
			}
		}
		if !errors.Is(readErr, errclass.ErrTransient) {
			t.Fatalf("reading the task while the BMC reboots: %v; want errclass.ErrTransient", readErr)
		}
		it, err := r.c.FinishUpdate(ctx, u, time.Minute)
		if err != nil || it.Version != "U46_v1.80" {
			t.Fatalf("FinishUpdate across the reboot: %+v, %v", it, err)
		}
		if st := r.sim.State(0); st.SelfReboots != 1 {
			t.Fatalf("self reboots = %d", st.SelfReboots)
		}
	})
	t.Run("5xx during the task", func(t *testing.T) {
		r := startDayTwo(t, "ilo", bmcsim.Knobs{Speed: 600})
		ctx := testCtx(t)
		u, err := r.c.StartUpdate(ctx, r.g, "h0", req)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.sim.SetFault(0, "http500"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.c.Task(ctx, u.Task); !errors.Is(err, errclass.ErrTransient) || !strings.Contains(err.Error(), "500") {
			t.Fatalf("task read during 5xx: %v", err)
		}
		heal := time.AfterFunc(300*time.Millisecond, func() { _ = r.sim.SetFault(0, "none") })
		defer heal.Stop()
		if it, err := r.c.FinishUpdate(ctx, u, time.Minute); err != nil || it.Version != "U46_v1.80" {
			t.Fatalf("FinishUpdate through 5xx: %+v, %v", it, err)
		}
	})
}

// A BMC whose service root links no UpdateService: a clear
// errclass.ErrUnsupported naming it (no profile of the simulator lacks one).
func TestDayTwoNoUpdateService(t *testing.T) {
	f := newFakeRF(t, map[string]map[string]any{"/redfish/v1": fakeRoot(false)})
	fakeSystem(f, "/redfish/v1/Systems/1", "/redfish/v1/Managers/1", nil)
	c, err := Dial(testCtx(t), Target{Address: f.addr("/redfish/v1/Systems/1"), Username: "admin", Password: "password"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := leasedGuard(time.Minute, nil)
	if _, err := c.FirmwareInventory(testCtx(t)); !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "offers no UpdateService") {
		t.Fatalf("inventory: %v", err)
	}
	if _, err := c.StartUpdate(testCtx(t), g, "h0", UpdateRequest{Component: "BIOS", ImageURL: "http://images/bios.bin"}); !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "offers no UpdateService") {
		t.Fatalf("update: %v", err)
	}
	for _, r := range f.requests() {
		if !strings.HasPrefix(r, "GET ") {
			t.Fatalf("a request other than GET reached the BMC: %s", r)
		}
	}
}

// A task the BMC no longer knows (404: OpenBMC keeps tasks in memory and
// loses them when its own flash restarts it) is judged by the inventory:
// the new version there is done; the old one until the timeout is
// ErrUpdateNotApplied. The simulator keeps its tasks across a reboot,
// hence the fake.
func TestDayTwoUpdateTaskGone(t *testing.T) {
	const item = "/redfish/v1/UpdateService/FirmwareInventory/bmc_active"
	f := newFakeRF(t, map[string]map[string]any{"/redfish/v1": fakeRoot(false),
		item: {"@odata.id": item, "Id": "bmc_active", "Name": "bmc_active", "Version": "2.15.0", "Updateable": true}})
	fakeSystem(f, "/redfish/v1/Systems/system", "/redfish/v1/Managers/bmc", nil)
	c, err := Dial(testCtx(t), Target{Address: f.addr("/redfish/v1/Systems/system"), Username: "admin", Password: "password"},
		Options{TaskPollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	u := &Update{Component: item, Name: "bmc_active", FromVersion: "2.14.0", Version: "2.15.0", Method: "MultipartHttpPush",
		Task: "/redfish/v1/TaskService/Tasks/0", Monitor: "/redfish/v1/TaskService/Tasks/0/Monitor"}
	if _, err := c.Task(testCtx(t), u.Task); !errors.Is(err, ErrTaskGone) || !errors.Is(err, errclass.ErrFailed) {
		t.Fatalf("Task of a task gone: %v", err)
	}
	if it, err := c.FinishUpdate(testCtx(t), u, 10*time.Second); err != nil || it.Version != "2.15.0" {
		t.Fatalf("FinishUpdate, task gone, new version shown: %+v, %v", it, err)
	}
	u.FromVersion, u.Version = "2.15.0", "2.16.0"
	_, err = c.FinishUpdate(testCtx(t), u, 200*time.Millisecond)
	if !errors.Is(err, ErrUpdateNotApplied) || !strings.Contains(err.Error(), "its task TaskService/Tasks/0 is gone (404) and UpdateService/FirmwareInventory/bmc_active still shows version 2.15.0 (expected 2.16.0)") {
		t.Fatalf("FinishUpdate, task gone, old version: %v", err)
	}
}
