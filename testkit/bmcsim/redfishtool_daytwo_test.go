package bmcsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestRedfishtoolDayTwo reads the day-two resources of the vendor
// profiles with DMTF's redfishtool 1.1.5 (it has no BIOS, update or
// storage subcommand: raw GET/PATCH/POST/DELETE, as an operator would),
// sets a BIOS attribute and reads it back after `Systems reset`, runs an
// update and follows its task, and creates and deletes a volume.
func TestRedfishtoolDayTwo(t *testing.T) {
	bin := testenv.LookPath(t, "redfishtool")
	if testing.Short() {
		t.Skip("runs simulated flashes through redfishtool")
	}
	for _, tc := range []struct {
		profile, attr, value, applyTime string
	}{
		{"ilo", "Sriov", "Disabled", ""},
		{"idrac", "SriovGlobalEnable", "Enabled", "OnReset"},
		{"openbmc", "pvm_stop_at_standby", "Enabled", ""},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			t.Parallel() // each call is a Python start: seconds on a busy machine
			sim, audit := startDayTwo(t, tc.profile, 1, Knobs{Speed: 3600})
			host := strings.TrimPrefix(sim.URL(0), "http://")
			run := func(args ...string) map[string]any {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				full := append([]string{"-r", host, "-S", "Never", "-u", "admin", "-p", "password", "-A", "Session"}, args...)
				cmd := exec.CommandContext(ctx, bin, full...)
				var out, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &stderr
				err := cmd.Run()
				var ee *exec.ExitError
				if errors.As(err, &ee) || err != nil {
					t.Fatalf("redfishtool %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), stderr.String())
				}
				var m map[string]any
				_ = json.Unmarshal(out.Bytes(), &m)
				return m
			}
			p := sim.prof
			sys := p.systems[0].path
			bios := run("raw", "GET", sys+"/Bios")
			set := bios["@Redfish.Settings"].(map[string]any)
			settings := set["SettingsObject"].(map[string]any)["@odata.id"].(string)
			file := run("raw", "GET", "/redfish/v1/Registries/"+bios["AttributeRegistry"].(string))
			reg := run("raw", "GET", file["Location"].([]any)[0].(map[string]any)["Uri"].(string))
			if reg["Id"] != bios["AttributeRegistry"] || !strings.HasPrefix(reg["@odata.type"].(string), "#AttributeRegistry.") {
				t.Errorf("registry %v %v; Bios names %v", reg["Id"], reg["@odata.type"], bios["AttributeRegistry"])
			}
			patch := map[string]any{"Attributes": map[string]string{tc.attr: tc.value}}
			if tc.applyTime != "" {
				patch["@Redfish.SettingsApplyTime"] = map[string]string{"ApplyTime": tc.applyTime}
			}
			data, _ := json.Marshal(patch)
			run("raw", "PATCH", settings, "-d", string(data))
			if got := sim.State(0).Bios[0].Pending[tc.attr]; got != tc.value {
				t.Errorf("pending %s: %v", tc.attr, got)
			}
			run("Systems", "-I", path.Base(sys), "reset", "ForceRestart")
			if got := run("raw", "GET", sys+"/Bios")["Attributes"].(map[string]any)[tc.attr]; got != tc.value {
				t.Errorf("%s after the reset: %v; want %s", tc.attr, got, tc.value)
			}

			us := run("raw", "GET", "/redfish/v1/UpdateService")
			inv := run("raw", "GET", us["FirmwareInventory"].(map[string]any)["@odata.id"].(string))
			members := inv["Members"].([]any)
			item := members[0].(map[string]any)["@odata.id"].(string)
			if acts, ok := us["Actions"].(map[string]any); ok {
				target := acts["#UpdateService.SimpleUpdate"].(map[string]any)["target"].(string)
				run("raw", "POST", target, "-d", `{"ImageURI":"http://images/fw-9.9.bin","TransferProtocol":"HTTP"}`)
				waitFor(t, "the update", func() bool {
					return run("raw", "GET", p.tasks+"/"+sim.State(0).Tasks[0].ID)["TaskState"] == "Completed"
				})
			} else if us["MultipartHttpPushUri"] == nil {
				t.Error("UpdateService offers neither SimpleUpdate nor a multipart push")
			}
			first := run("raw", "GET", item)
			if first["RelatedItem"] == nil || first["Version"] != sim.State(0).Firmware[0].Version ||
				(us["Actions"] != nil) != (first["Version"] == "fw-9.9") {
				t.Errorf("inventory item after the update: %v", first)
			}

			for _, st := range p.storage {
				drives := st.d2.drives
				if st.d2.volumes == "" || len(st.d2.raidTypes) == 0 || len(drives) == 0 {
					continue
				}
				body, _ := json.Marshal(map[string]any{"RAIDType": "RAID0", "Links": map[string]any{"Drives": []any{map[string]string{"@odata.id": p.drives[drives[0]].path}}}})
				run("raw", "POST", st.d2.volumes, "-d", string(body))
				waitFor(t, "the volume", func() bool { return len(sim.State(0).Volumes) == 1 && sim.State(0).Volumes[0].Ready })
				vol := run("raw", "GET", sim.State(0).Volumes[0].Path)
				if vol["RAIDType"] != "RAID0" {
					t.Errorf("volume: %v", vol)
				}
				run("raw", "DELETE", vol["@odata.id"].(string))
				if n := len(sim.State(0).Volumes); n != 0 {
					t.Errorf("volumes after DELETE: %v", n)
				}
			}
			lines, _ := ReadAudit(audit)
			for _, l := range lines {
				if l.Status >= 300 {
					t.Errorf("redfishtool request refused: %+v", l)
				}
			}
		})
	}
}
