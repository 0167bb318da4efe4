package bmcsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestRedfishtoolEveryProfile runs DMTF's redfishtool (Debian package
// redfishtool) against every profile: service root, each system by id, a
// reset, the boot override, the manager, a raw GET of the virtual media
// device and a raw insert and eject (actions or PATCH, as the device has it). Session auth where the profile offers it, -A Basic where it does
// not (redfishtool's -A Session then fails: it needs Links.Sessions).
// Exit codes and key fields are asserted, and the simulator's own state.
func TestRedfishtoolEveryProfile(t *testing.T) {
	bin := testenv.LookPath(t, "redfishtool")
	for _, name := range Profiles() {
		t.Run(name, func(t *testing.T) {
			sim, err := Start(Config{Hosts: 1, Profile: name, PowerOn: true})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			auth := "Session"
			if sim.prof.sessions == "" {
				auth = "Basic"
			}
			host := strings.TrimPrefix(sim.URL(0), "http://")
			run := func(args ...string) (map[string]any, int, string) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				full := append([]string{"-r", host, "-S", "Never", "-u", "admin", "-p", "password", "-A", auth}, args...)
				cmd := exec.CommandContext(ctx, bin, full...)
				var out, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &stderr
				err := cmd.Run()
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatalf("redfishtool %v: %v", args, err)
				}
				var m map[string]any
				_ = json.Unmarshal(out.Bytes(), &m)
				return m, code, out.String() + stderr.String()
			}
			must := func(args ...string) map[string]any {
				t.Helper()
				m, code, out := run(args...)
				if code != 0 {
					t.Fatalf("redfishtool %s: exit %d\n%s", strings.Join(args, " "), code, out)
				}
				return m
			}

			bmc0 := sim.ExpectedBMC(0, 0)
			root := must("root")
			if root["RedfishVersion"] != bmc0.RedfishVersion || root["Vendor"] != bmc0.Vendor {
				t.Errorf("root: RedfishVersion %v Vendor %v; want %s %s", root["RedfishVersion"], root["Vendor"], bmc0.RedfishVersion, bmc0.Vendor)
			}
			for j, sr := range sim.prof.systems {
				id := path.Base(sr.path)
				want, hw := sim.ExpectedBMC(0, j), sim.ExpectedHardware(0, j)
				sys := must("Systems", "-I", id)
				if sys["Id"] != id || sys["UUID"] != hw.SystemUUID || sys["@odata.id"] != want.System {
					t.Errorf("Systems -I %s: Id %v UUID %v @odata.id %v", id, sys["Id"], sys["UUID"], sys["@odata.id"])
				}
				must("Systems", "-I", id, "reset", "ForceOff")
				if st := sim.State(0).Systems[j]; st.Power != "Off" {
					t.Errorf("after reset ForceOff: %+v", st)
				}
				must("Systems", "-I", id, "setBootOverride", "Once", "Cd")
				if st := sim.State(0).Systems[j]; st.BootOverride.Target != "Cd" || st.BootOverride.Enabled != "Once" {
					t.Errorf("after setBootOverride Once Cd: %+v", st)
				}
				must("Systems", "-I", id, "reset", "On")
				if st := sim.State(0).Systems[j]; st.Power != "On" || st.LastBoot != "Cd" {
					t.Errorf("after reset On: %+v", st)
				}
				mgr := must("Managers", "-I", path.Base(want.Manager))
				if mgr["FirmwareVersion"] != want.FirmwareVersion || mgr["Model"] != want.Model {
					t.Errorf("Managers -I %s: FirmwareVersion %v Model %v; want %s %s", path.Base(want.Manager), mgr["FirmwareVersion"], mgr["Model"], want.FirmwareVersion, want.Model)
				}
				vmPath := want.VirtualMedia
				for _, m := range sim.prof.media {
					if vmPath == "" && strings.HasPrefix(m.path, want.Manager+"/") {
						vmPath = m.path // no-vmedia: the device there is
					}
				}
				if vmPath == "" {
					continue // none at all (blade with virtual media licensed off)
				}
				vm := must("raw", "GET", vmPath)
				types := strs(vm["MediaTypes"])
				_, hasInsert := vm["Actions"]
				switch {
				case want.VirtualMedia == "" && (slices.Contains(types, "CD") || slices.Contains(types, "DVD")):
					t.Errorf("%s takes %v but no device is expected", vmPath, types)
				case want.VirtualMedia != "" && !slices.Contains(types, "CD"):
					t.Errorf("%s: MediaTypes %v", vmPath, types)
				case want.VirtualMediaMethod == "actions" && !hasInsert, want.VirtualMediaMethod == "patch" && hasInsert:
					t.Errorf("%s: actions %v; method %s", vmPath, hasInsert, want.VirtualMediaMethod)
				}
				// Insert and eject with raw calls, as the device wants them.
				img := `{"Image":"http://images/` + id + `.iso","TransferProtocolType":"HTTP"}`
				switch want.VirtualMediaMethod {
				case "actions":
					must("raw", "POST", vmPath+"/Actions/VirtualMedia.InsertMedia", "-d", img)
				case "patch":
					must("raw", "PATCH", vmPath, "-d", `{"Image":"http://images/`+id+`.iso","Inserted":true}`)
				}
				if want.VirtualMediaMethod != "" {
					if m := mediaAt(sim.State(0), vmPath); !m.Inserted || m.Image != "http://images/"+id+".iso" {
						t.Errorf("after redfishtool inserted: %+v", m)
					}
					if want.VirtualMediaMethod == "actions" {
						must("raw", "POST", vmPath+"/Actions/VirtualMedia.EjectMedia", "-d", "{}")
					} else {
						must("raw", "PATCH", vmPath, "-d", `{"Image":null,"Inserted":false}`)
					}
					if m := mediaAt(sim.State(0), vmPath); m.Inserted || m.Image != "" {
						t.Errorf("after redfishtool ejected: %+v", m)
					}
				}
			}
			for j, s := range sim.State(0).Systems {
				if j >= len(sim.prof.systems) || s.Power != "On" || s.LastBoot != "Cd" {
					t.Errorf("system %d after redfishtool: %+v", j, s)
				}
			}
			if st := sim.State(0); (st.Logins > 0) != (auth == "Session") {
				t.Errorf("logins %d with -A %s", st.Logins, auth)
			}
			if auth == "Basic" {
				// redfishtool cannot log in without Links.Sessions: a fact,
				// checked so the profile stays Basic-only.
				auth = "Session"
				if _, code, out := run("Systems", "-I", path.Base(sim.prof.systems[0].path)); code == 0 {
					t.Errorf("-A Session on a BMC without a session service worked:\n%s", out)
				}
				auth = "Basic"
			}
			if _, code, _ := run("-p", "wrong", "Systems", "-I", path.Base(sim.prof.systems[0].path)); code == 0 {
				t.Error("a wrong password was accepted")
			} else {
				t.Logf("%s: wrong password: exit %s", name, strconv.Itoa(code))
			}
		})
	}
}

func mediaAt(st State, p string) MediaState {
	for _, m := range st.VirtualMedia {
		if m.Path == p {
			return m
		}
	}
	return MediaState{}
}
