package bmcsim

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rfClient talks to one simulated BMC with HTTP Basic auth.
type rfClient struct {
	t   *testing.T
	sim *Sim
	i   int
}

func (c rfClient) do(method, pth string, body any, hdr ...string) (int, http.Header, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	r, err := http.NewRequest(method, c.sim.URL(c.i)+pth, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	r.SetBasicAuth(DefaultUsername, DefaultPassword)
	for k := 0; k+1 < len(hdr); k += 2 {
		r.Header.Set(hdr[k], hdr[k+1])
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(r)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, pth, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, resp.Header, m
}

func (c rfClient) get(pth string) map[string]any {
	c.t.Helper()
	code, _, m := c.do("GET", pth, nil)
	if code != 200 {
		c.t.Fatalf("GET %s: %d %v", pth, code, m)
	}
	return m
}

// waitTask polls a task monitor until it stops answering 202.
func (c rfClient) waitTask(mon string) (int, http.Header, map[string]any) {
	c.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		code, h, m := c.do("GET", mon, nil)
		if code != http.StatusAccepted {
			return code, h, m
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("task monitor %s still 202 after 2 minutes", mon)
	return 0, nil, nil
}

func errorID(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	infos, _ := e["@Message.ExtendedInfo"].([]any)
	if len(infos) == 0 {
		return ""
	}
	id, _ := infos[0].(map[string]any)["MessageId"].(string)
	return id
}

func startDayTwo(t *testing.T, profile string, hosts int, k Knobs) (*Sim, string) {
	t.Helper()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := Start(Config{Hosts: hosts, Profile: profile, AuditPath: audit, PowerOn: true, Knobs: k})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim, audit
}

const (
	iloInv   = "/redfish/v1/UpdateService/FirmwareInventory/2"
	iloFlash = "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"
)

// A "15-minute" flash at speed 900 takes one second: the task runs, a
// second update is refused, the inventory and the system's BiosVersion
// show the new version, and the audit shows exactly one update started.
func TestUpdateRunsAsATask(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulated flash")
	}
	sim, audit := startDayTwo(t, "ilo", 1, Knobs{Speed: 900})
	c := rfClient{t, sim, 0}
	code, h, body := c.do("POST", iloFlash, map[string]any{"ImageURI": "http://images/U46_v1.80.bin", "Targets": []string{iloInv}})
	mon := h.Get("Location")
	if code != 202 || !strings.HasPrefix(mon, "/redfish/v1/TaskService/TaskMonitors/") || body != nil {
		t.Fatalf("SimpleUpdate: %d Location %q body %v; want 202, a task monitor, no body (iLO)", code, mon, body)
	}
	if code, _, m := c.do("POST", iloFlash, map[string]any{"ImageURI": "http://images/other.bin"}); code != 409 || errorID(m) != "Update.1.0.UpdateInProgress" {
		t.Errorf("second update while one runs: %d %s", code, errorID(m))
	}
	if inv := c.get(iloInv); inv["Status"].(map[string]any)["State"] != "Updating" {
		t.Errorf("inventory during the flash: %v", inv["Status"])
	}
	code, _, task := c.waitTask(mon)
	if code != 200 || task["TaskState"] != "Completed" || task["PercentComplete"] != float64(100) {
		t.Fatalf("after the flash: %d %v", code, task)
	}
	if v := c.get(iloInv)["Version"]; v != "U46_v1.80" {
		t.Errorf("inventory Version %v; want U46_v1.80", v)
	}
	if v := c.get("/redfish/v1/Systems/1")["BiosVersion"]; v != "U46_v1.80" {
		t.Errorf("system BiosVersion %v; want it to follow the inventory", v)
	}
	st := sim.State(0)
	if len(st.Tasks) != 1 || st.Tasks[0].State != "Completed" || st.Tasks[0].Start == "" || st.Tasks[0].End <= st.Tasks[0].Start {
		t.Errorf("state tasks: %+v", st.Tasks)
	}
	lines, err := ReadAudit(audit)
	if err != nil {
		t.Fatal(err)
	}
	started, refused := 0, 0
	for _, l := range lines {
		if l.Task != "" {
			started++
		}
		if l.Status == 409 && l.UpdateRunning == st.Tasks[0].ID {
			refused++
		}
	}
	if started != 1 || refused != 1 {
		t.Errorf("audit: %d updates started, %d refused during one; want 1, 1: %+v", started, refused, lines)
	}
}

func multipartImage(t *testing.T, file string, params string) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if params != "" {
		pw, _ := mw.CreateFormField("UpdateParameters")
		_, _ = pw.Write([]byte(params))
	}
	fw, err := mw.CreateFormFile("UpdateFile", file)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(bytes.Repeat([]byte{0xA5}, 4096))
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// The update outcomes a test can ask for, through bmcweb's multipart push.
func TestUpdateOutcomes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simulated flashes")
	}
	const bmcInv = "/redfish/v1/UpdateService/FirmwareInventory/bmc_active"
	for _, tc := range []struct {
		outcome, state, version string
	}{
		{OutcomeFail, "Exception", "2.14.0-dev-1092-g5e44e3d8b"},
		{OutcomeNoChange, "Completed", "2.14.0-dev-1092-g5e44e3d8b"},
		{OutcomeSuccess, "Completed", "obmc-phosphor-image-2.15.static"}, // the file name without its last extension
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			sim, _ := startDayTwo(t, "openbmc", 1, Knobs{Speed: 1800, UpdateOutcome: tc.outcome})
			c := rfClient{t, sim, 0}
			body, ct := multipartImage(t, "obmc-phosphor-image-2.15.static.mtd", `{"Targets":["`+bmcInv+`"]}`)
			code, h, task := c.do("POST", "/redfish/v1/UpdateService/update", body, "Content-Type", ct)
			if code != 202 || task["TaskState"] == nil || h.Get("Location") == "" {
				t.Fatalf("multipart push: %d %v (bmcweb answers the Task)", code, task)
			}
			_, _, task = c.waitTask(h.Get("Location"))
			if task["TaskState"] != tc.state {
				t.Errorf("TaskState %v; want %s: %v", task["TaskState"], tc.state, task["Messages"])
			}
			if v := c.get(bmcInv)["Version"]; v != tc.version {
				t.Errorf("Version %v; want %s", v, tc.version)
			}
			if v := c.get("/redfish/v1/Managers/bmc")["FirmwareVersion"]; v != tc.version {
				t.Errorf("manager FirmwareVersion %v; want %s", v, tc.version)
			}
		})
	}
	t.Run("hang", func(t *testing.T) {
		sim, _ := startDayTwo(t, "openbmc", 1, Knobs{Speed: 6000, UpdateOutcome: OutcomeHang})
		c := rfClient{t, sim, 0}
		body, ct := multipartImage(t, "img.tar", "")
		_, h, _ := c.do("POST", "/redfish/v1/UpdateService/update", body, "Content-Type", ct)
		time.Sleep(300 * time.Millisecond) // three times the flash's length
		code, _, task := c.do("GET", h.Get("Location"), nil)
		if code != 202 || task["TaskState"] != "Running" || task["PercentComplete"] != float64(HangPercent) {
			t.Fatalf("hung task: %d %v %v", code, task["TaskState"], task["PercentComplete"])
		}
		if code, _, _ := c.do("DELETE", h.Get("Location"), nil); code != 204 {
			t.Fatalf("DELETE task monitor: %d", code)
		}
		if _, _, task := c.waitTask(h.Get("Location")); task["TaskState"] != "Killed" {
			t.Errorf("after DELETE: %v", task["TaskState"])
		}
	})
}

// A power change during a flash is in the audit; with BrickOnPowerChange
// the board is bricked.
func TestPowerChangeDuringFlash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simulated flashes")
	}
	const sys = "/redfish/v1/Systems/System.Embedded.1"
	for _, brick := range []bool{false, true} {
		sim, audit := startDayTwo(t, "idrac", 1, Knobs{Speed: 60, BrickOnPowerChange: brick})
		c := rfClient{t, sim, 0}
		code, h, _ := c.do("POST", iloFlash, map[string]any{"ImageURI": "http://images/BIOS_1.11.0.EXE"})
		if code != 202 || !strings.Contains(h.Get("Location"), "JID_") {
			t.Fatalf("SimpleUpdate: %d %v", code, h)
		}
		if code, _, _ := c.do("POST", sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"}); code != 204 {
			t.Fatalf("ForceOff during the flash: %d", code)
		}
		c.do("POST", sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "On"})
		lines, _ := ReadAudit(audit)
		during := 0
		for _, l := range lines {
			if strings.HasSuffix(l.Path, "ComputerSystem.Reset") && l.UpdateRunning != "" {
				during++
			}
		}
		st := sim.State(0)
		want := 2 // ForceOff and On
		if brick {
			want = 1 // the flash died with the ForceOff
		}
		if during != want || st.Bricked != brick {
			t.Errorf("brick %v: %d power changes during the flash in the audit; bricked %v", brick, during, st.Bricked)
		}
		sd := c.get(sys)
		if brick && (st.Power != "Off" || st.Tasks[0].State != "Exception" || sd["Status"].(map[string]any)["Health"] != "Critical") {
			t.Errorf("bricked board: power %s task %s status %v", st.Power, st.Tasks[0].State, sd["Status"])
		}
		if !brick && (st.Power != "On" || st.Tasks[0].State != "Running") {
			t.Errorf("not bricked: power %s task %s", st.Power, st.Tasks[0].State)
		}
	}
}

// Knobs.RebootMinutes: halfway through the flash the BMC's port refuses
// connections for a while, then serves again (sessions gone) and the task
// completes.
func TestBMCRebootsDuringUpdate(t *testing.T) {
	if testing.Short() {
		t.Skip("reboots a simulated BMC")
	}
	sim, _ := startDayTwo(t, "ilo", 1, Knobs{Speed: 900, RebootMinutes: 30}) // flash 1 s, reboot 2 s
	c := rfClient{t, sim, 0}
	code, h, _ := c.do("POST", iloFlash, map[string]any{"ImageURI": "http://images/ilo5_305.fwpkg", "Targets": []string{"/redfish/v1/UpdateService/FirmwareInventory/1"}})
	if code != 202 {
		t.Fatalf("SimpleUpdate: %d", code)
	}
	addr := strings.TrimPrefix(sim.URL(0), "http://")
	waitFor(t, "the BMC to reboot", func() bool { return sim.State(0).Rebooting })
	if conn, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		conn.Close()
		t.Error("a rebooting BMC accepted a connection")
	}
	waitFor(t, "the BMC to come back", func() bool { return !sim.State(0).Rebooting })
	_, _, task := c.waitTask(h.Get("Location"))
	if task["TaskState"] != "Completed" || sim.State(0).SelfReboots != 1 {
		t.Errorf("after the reboot: task %v, reboots %d", task["TaskState"], sim.State(0).SelfReboots)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func messageIDs(m map[string]any) map[string]string {
	set, _ := m["@Redfish.Settings"].(map[string]any)
	msgs, _ := set["Messages"].([]any)
	out := map[string]string{}
	for _, x := range msgs {
		mm := x.(map[string]any)
		rel, _ := mm["RelatedProperties"].([]any)
		key := ""
		if len(rel) > 0 {
			key = rel[0].(string)
		}
		out[key] = mm["MessageId"].(string)
	}
	return out
}

// iLO: pending BIOS settings are checked at the next reset; what does not
// take is reported per attribute in @Redfish.Settings.Messages.
func TestBiosSettingsAppliedAtReset(t *testing.T) {
	sim, _ := startDayTwo(t, "ilo", 1, Knobs{BiosRejects: []string{"Sriov"}})
	c := rfClient{t, sim, 0}
	const bios, settings = "/redfish/v1/Systems/1/Bios", "/redfish/v1/Systems/1/bios/settings"
	patch := map[string]any{"Attributes": map[string]any{"ProcHyperthreading": "Disabled", "WorkloadProfile": "Bogus",
		"ProcCoreDisable": 99, "SerialNumber": "X", "Sriov": "Disabled", "ServerAssetTag": "rack-7"}}
	if code, _, m := c.do("PATCH", settings, patch); code != 204 {
		t.Fatalf("PATCH %s: %d %v", settings, code, m)
	}
	if p := c.get(settings)["Attributes"].(map[string]any); len(p) != 6 {
		t.Errorf("pending: %v", p)
	}
	if a := c.get(bios)["Attributes"].(map[string]any); a["ProcHyperthreading"] != "Enabled" || a["AdminPassword"] != nil {
		t.Errorf("current before the reset: %v", a)
	}
	c.do("POST", "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"})
	b := c.get(bios)
	a := b["Attributes"].(map[string]any)
	if a["ProcHyperthreading"] != "Disabled" || a["ServerAssetTag"] != "rack-7" || a["WorkloadProfile"] != "GeneralPowerEfficientCompute" ||
		a["Sriov"] != "Enabled" || !strings.HasPrefix(a["SerialNumber"].(string), "MXQ") {
		t.Errorf("after the reset: %v", a)
	}
	want := map[string]string{"#/Attributes/WorkloadProfile": "Base.1.8.PropertyValueNotInList", "#/Attributes/ProcCoreDisable": "Base.1.12.PropertyValueOutOfRange",
		"#/Attributes/SerialNumber": "Base.1.8.PropertyNotWritable", "#/Attributes/Sriov": "Base.1.12.PropertyNotUpdated"}
	got := messageIDs(b)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("message for %s: %q; want %s (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("messages %v; want %v", got, want)
	}
	if p := c.get(settings)["Attributes"].(map[string]any); len(p) != 0 {
		t.Errorf("pending after the reset: %v", p)
	}
}

// iDRAC: values are checked at PATCH, and apply only with an apply time.
func TestBiosSettingsIDRAC(t *testing.T) {
	sim, _ := startDayTwo(t, "idrac", 1, Knobs{})
	c := rfClient{t, sim, 0}
	const sys = "/redfish/v1/Systems/System.Embedded.1"
	if code, _, m := c.do("PATCH", sys+"/Bios/Settings", map[string]any{"Attributes": map[string]any{"SysProfile": "Fast", "LogicalProc": "Disabled"}}); code != 400 || errorID(m) != "Base.1.8.PropertyValueNotInList" {
		t.Errorf("bad value: %d %s", code, errorID(m))
	}
	if code, _, m := c.do("PATCH", sys+"/Bios/Settings", map[string]any{"Attributes": map[string]any{"LogicalProc": "Disabled"},
		"@Redfish.SettingsApplyTime": map[string]string{"ApplyTime": "Immediate"}}); code != 400 {
		t.Errorf("ApplyTime Immediate (not supported): %d %v", code, m)
	}
	c.do("PATCH", sys+"/Bios/Settings", map[string]any{"Attributes": map[string]any{"LogicalProc": "Disabled"}})
	c.do("POST", sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"})
	if a := c.get(sys + "/Bios")["Attributes"].(map[string]any); a["LogicalProc"] != "Enabled" {
		t.Errorf("applied without an apply time: %v", a["LogicalProc"])
	}
	c.do("PATCH", sys+"/Bios/Settings", map[string]any{"Attributes": map[string]any{"ControlledTurboMinusBin": 3},
		"@Redfish.SettingsApplyTime": map[string]string{"ApplyTime": "OnReset"}})
	c.do("POST", sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"})
	b := c.get(sys + "/Bios")
	if a := b["Attributes"].(map[string]any); a["LogicalProc"] != "Disabled" || a["ControlledTurboMinusBin"] != float64(3) {
		t.Errorf("after a reset with OnReset: %v", a)
	}
	if got := messageIDs(b); got[""] != "Base.1.8.Success" {
		t.Errorf("messages %v", got)
	}
}

// Volumes: refusals name the property; iLO creates at once, iDRAC through
// a job that waits for the reset; a drive in a volume cannot be erased.
func TestVolumesAndErase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs simulated jobs")
	}
	sim, _ := startDayTwo(t, "ilo", 1, Knobs{Speed: 3600})
	c := rfClient{t, sim, 0}
	const st = "/redfish/v1/Systems/1/Storage/DE00A000"
	d0, d1 := map[string]string{"@odata.id": st + "/Drives/0"}, map[string]string{"@odata.id": st + "/Drives/1"}
	for raid, want := range map[string]string{"RAID50": "Base.1.8.PropertyValueNotInList", "RAID6": "Base.1.8.PropertyValueConflict"} {
		if code, _, m := c.do("POST", st+"/Volumes", map[string]any{"RAIDType": raid, "Links": map[string]any{"Drives": []any{d0, d1}}}); code != 400 || errorID(m) != want {
			t.Errorf("%s: %d %s; want 400 %s", raid, code, errorID(m), want)
		}
	}
	code, h, vol := c.do("POST", st+"/Volumes", map[string]any{"RAIDType": "RAID1", "Name": "os", "Links": map[string]any{"Drives": []any{d0, d1}}})
	if code != 201 || h.Get("Location") == "" || vol["CapacityBytes"] != float64(800166076416) {
		t.Fatalf("create RAID1: %d %v %v", code, h.Get("Location"), vol)
	}
	if n := c.get(st + "/Volumes")["Members@odata.count"]; n != float64(1) {
		t.Errorf("volumes: %v", n)
	}
	if code, _, _ := c.do("POST", st+"/Drives/0/Actions/Drive.SecureErase", map[string]any{}); code != 409 {
		t.Errorf("erase of a volume's drive: %d", code)
	}
	if code, _, _ := c.do("DELETE", h.Get("Location"), nil); code != 204 {
		t.Errorf("DELETE volume: %d", code)
	}
	code, h, _ = c.do("POST", st+"/Drives/0/Actions/Drive.SecureErase", map[string]any{})
	if code != 202 {
		t.Fatalf("erase: %d", code)
	}
	if _, _, task := c.waitTask(h.Get("Location")); task["TaskState"] != "Completed" || sim.State(0).Drives[0].Erased != 1 {
		t.Errorf("erase task %v, drives %+v", task["TaskState"], sim.State(0).Drives)
	}

	sim2, _ := startDayTwo(t, "idrac", 1, Knobs{Speed: 3600})
	c = rfClient{t, sim2, 0}
	const sys = "/redfish/v1/Systems/System.Embedded.1"
	if code, _, m := c.do("POST", sys+"/Storage/AHCI.Embedded.1-1/Volumes", map[string]any{"RAIDType": "RAID0"}); code != 400 || !strings.Contains(m["error"].(map[string]any)["message"].(string), "builds no RAID") {
		t.Errorf("AHCI: %d %v", code, m)
	}
	perc := sys + "/Storage/RAID.Integrated.1-1"
	drives := []any{map[string]string{"@odata.id": perc + "/Drives/Disk.Bay.0:Enclosure.Internal.0-1:RAID.Integrated.1-1"}}
	code, h, _ = c.do("POST", perc+"/Volumes", map[string]any{"RAIDType": "RAID0", "Links": map[string]any{"Drives": drives}, "@Redfish.OperationApplyTime": "OnReset"})
	if code != 202 {
		t.Fatalf("create OnReset: %d", code)
	}
	time.Sleep(100 * time.Millisecond) // longer than the job: it must still wait for the reset
	if st := sim2.State(0).Tasks[0]; st.State != "New" {
		t.Errorf("OnReset job before the reset: %+v", st)
	}
	c.do("POST", sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceRestart"})
	code, loc, _ := c.waitTask(h.Get("Location"))
	if code != 201 || !strings.HasPrefix(loc.Get("Location"), perc+"/Volumes/") {
		t.Fatalf("job monitor after the reset: %d %v", code, loc)
	}
	v := c.get(loc.Get("Location"))
	code, h, _ = c.do("POST", v["Actions"].(map[string]any)["#Volume.Initialize"].(map[string]any)["target"].(string), map[string]string{"InitializeType": "Fast"})
	if code != 202 {
		t.Fatalf("Volume.Initialize: %d", code)
	}
	if _, _, task := c.waitTask(h.Get("Location")); task["TaskState"] != "Completed" {
		t.Errorf("initialize: %v", task)
	}
}

func TestKnobsControl(t *testing.T) {
	sim, _ := startDayTwo(t, "default", 1, Knobs{})
	r, b := req(t, "PUT", sim.URL(0)+"/sim/knobs", `{"speed": 60, "updateOutcome": "hang"}`, nil)
	if r.StatusCode != 200 || sim.State(0).Knobs.Speed != 60 || sim.State(0).Knobs.UpdateOutcome != OutcomeHang || sim.State(0).Knobs.UpdateMinutes != DefaultUpdateMinutes {
		t.Errorf("PUT /sim/knobs: %d %s %+v", r.StatusCode, b, sim.State(0).Knobs)
	}
	for _, bad := range []string{`{"updateOutcome": "maybe"}`, `{"speed": -1}`, `{"nope": 1}`} {
		if r, b := req(t, "PUT", sim.URL(0)+"/sim/knobs", bad, nil); r.StatusCode != 400 {
			t.Errorf("PUT /sim/knobs %s: %d %s", bad, r.StatusCode, b)
		}
	}
	if err := sim.SetKnobs(0, Knobs{UpdateOutcome: "x"}); err == nil {
		t.Error("SetKnobs accepted a bad outcome")
	}
	if _, err := Start(Config{Hosts: 1, Knobs: Knobs{Speed: -2}}); err == nil {
		t.Error("Start accepted a negative speed")
	}
}
