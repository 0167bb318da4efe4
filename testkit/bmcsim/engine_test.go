package bmcsim

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The generic engine on every profile: auth as the profile says, power and
// one-time boot per system (one system's change leaves the others alone),
// ETags on systems and virtual media, media driven the way the device
// allows (actions, or PATCH) and refused the other way.
func TestEngineOnEveryProfile(t *testing.T) {
	for _, name := range Profiles() {
		t.Run(name, func(t *testing.T) {
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			sim, err := Start(Config{Hosts: 2, Profile: name, AuditPath: audit})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			u := sim.URL(1)
			basic := map[string]string{"basic": "admin:password"}
			p := sim.prof

			// Auth.
			login, _ := req(t, "POST", u+v1+"/SessionService/Sessions", `{"UserName":"admin","Password":"password"}`, nil)
			if p.sessions != "" {
				if login.StatusCode != 201 || login.Header.Get("X-Auth-Token") == "" {
					t.Fatalf("login: %d", login.StatusCode)
				}
				tok := map[string]string{"X-Auth-Token": login.Header.Get("X-Auth-Token")}
				if r, _ := req(t, "GET", u+p.systems[0].path, "", tok); r.StatusCode != 200 {
					t.Fatalf("GET with a session: %d", r.StatusCode)
				}
			} else if login.StatusCode != 404 && login.StatusCode != 405 {
				t.Fatalf("login on a BMC without a session service: %d; want 404 or 405", login.StatusCode)
			}
			if r, _ := req(t, "GET", u+p.systems[0].path, "", nil); r.StatusCode != 401 {
				t.Fatalf("GET without auth: %d", r.StatusCode)
			}

			for j, sr := range p.systems {
				sys := sr.path
				reset := sys + "/Actions/ComputerSystem.Reset"
				if a, ok := p.actions[reset]; !ok || a.name != "#ComputerSystem.Reset" {
					t.Fatalf("%s: no Reset action at %s", sys, reset)
				}
				r, _ := req(t, "GET", u+sys, "", basic)
				tag := r.Header.Get("ETag")
				if tag == "" || !strings.Contains(r.Header.Get("Allow"), "PATCH") {
					t.Fatalf("%s: ETag %q, Allow %q", sys, tag, r.Header.Get("Allow"))
				}
				boot := `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`
				if r, _ := req(t, "PATCH", u+sys, boot, map[string]string{"basic": "admin:password", "If-Match": `W/"stale"`}); r.StatusCode != 412 {
					t.Fatalf("%s: PATCH with a stale ETag: %d", sys, r.StatusCode)
				}
				if r, _ := req(t, "PATCH", u+sys, boot, map[string]string{"basic": "admin:password", "If-Match": tag}); r.StatusCode != 204 {
					t.Fatalf("%s: PATCH boot: %d", sys, r.StatusCode)
				}
				if r, _ := req(t, "POST", u+reset, `{"ResetType":"On"}`, basic); r.StatusCode != 204 {
					t.Fatalf("%s: On: %d", sys, r.StatusCode)
				}
				st := sim.State(1).Systems
				if st[j].Power != "On" || st[j].LastBoot != "Cd" || st[j].BootOverride.Enabled != "Disabled" || st[j].Path != sys {
					t.Fatalf("%s after Cd once + On: %+v", sys, st[j])
				}
				for k := range st {
					if k > j && (st[k].Power != "Off" || st[k].LastBoot != "") {
						t.Errorf("system %d changed with system %d: %+v", k, j, st[k])
					}
				}
				var got struct{ PowerState string }
				_, b := req(t, "GET", u+sys, "", basic)
				_ = json.Unmarshal(b, &got)
				if wantPower := map[bool]string{false: "On", true: ""}[p.noPower]; got.PowerState != wantPower {
					t.Errorf("%s PowerState %q; want %q", sys, got.PowerState, wantPower)
				}

				// Media: the device the expectations name.
				want := sim.ExpectedBMC(1, j)
				if want.VirtualMedia == "" {
					// None reachable from this system (another blade's
					// manager may have one).
					for _, m := range p.media {
						if (strings.HasPrefix(m.path, sys+"/") || strings.HasPrefix(m.path, want.Manager+"/")) && takesCD(m.tree) {
							t.Errorf("no device expected but %s takes CD", m.path)
						}
					}
					continue
				}
				vm := p.res[want.VirtualMedia]
				img := "http://images/" + sr.path[strings.LastIndex(sr.path, "/")+1:] + ".iso"
				if want.VirtualMediaMethod == "actions" {
					if r, _ := req(t, "PATCH", u+vm.path, `{"Image":"`+img+`","Inserted":true}`, basic); r.StatusCode != 405 {
						t.Errorf("%s: PATCH of a device with actions: %d; want 405", vm.path, r.StatusCode)
					}
					insert := vm.path + "/Actions/VirtualMedia.InsertMedia"
					if p.needsProto {
						if r, b := req(t, "POST", u+insert, `{"Image":"`+img+`"}`, basic); r.StatusCode != 400 || !strings.Contains(string(b), "ActionParameterMissing") {
							t.Errorf("%s: InsertMedia without TransferProtocolType: %d %s", vm.path, r.StatusCode, b)
						}
					}
					if r, _ := req(t, "POST", u+insert, `{"Image":"`+img+`","TransferProtocolType":"HTTP"}`, basic); r.StatusCode != 204 {
						t.Fatalf("%s: InsertMedia: %d", vm.path, r.StatusCode)
					}
				} else {
					r, _ := req(t, "GET", u+vm.path, "", basic)
					mtag := r.Header.Get("ETag")
					if !strings.Contains(r.Header.Get("Allow"), "PATCH") || mtag == "" {
						t.Fatalf("%s: Allow %q ETag %q", vm.path, r.Header.Get("Allow"), mtag)
					}
					if _, ok := p.actions[vm.path+"/Actions/VirtualMedia.InsertMedia"]; ok {
						t.Fatal("a patch device with an InsertMedia action")
					}
					body := `{"Image":"` + img + `","Inserted":true,"WriteProtected":true}`
					if r, _ := req(t, "PATCH", u+vm.path, body, map[string]string{"basic": "admin:password", "If-Match": `W/"999"`}); r.StatusCode != 412 {
						t.Fatalf("%s: PATCH with a stale ETag: %d", vm.path, r.StatusCode)
					}
					if r, _ := req(t, "PATCH", u+vm.path, body, map[string]string{"basic": "admin:password", "If-Match": mtag}); r.StatusCode != 204 {
						t.Fatalf("%s: PATCH: %d", vm.path, r.StatusCode)
					}
				}
				var doc struct {
					Image    string
					Inserted bool
				}
				_, b = req(t, "GET", u+vm.path, "", basic)
				_ = json.Unmarshal(b, &doc)
				if doc.Image != img || !doc.Inserted {
					t.Fatalf("%s after insert: %s", vm.path, b)
				}
				inserted := 0
				for _, m := range sim.State(1).VirtualMedia {
					if m.Inserted {
						inserted++
						if m.Path != vm.path || m.Image != img {
							t.Errorf("inserted in %+v; want %s", m, vm.path)
						}
					}
				}
				if inserted != 1 {
					t.Errorf("%d devices inserted", inserted)
				}
				if j == 0 && (sim.State(1).Media != Media{Image: img, Inserted: true}) {
					t.Errorf("State.Media %+v", sim.State(1).Media)
				}
				if want.VirtualMediaMethod == "actions" {
					if r, _ := req(t, "POST", u+vm.path+"/Actions/VirtualMedia.EjectMedia", "", basic); r.StatusCode != 204 {
						t.Fatalf("EjectMedia: %d", r.StatusCode)
					}
				} else if r, _ := req(t, "PATCH", u+vm.path, `{"Image":null,"Inserted":false}`, basic); r.StatusCode != 204 {
					t.Fatalf("PATCH eject: %d", r.StatusCode)
				}
				for _, m := range sim.State(1).VirtualMedia {
					if m.Inserted || m.Image != "" {
						t.Errorf("after eject: %+v", m)
					}
				}
			}
			if st := sim.State(0); st.Mutations != 0 {
				t.Errorf("BMC 0 was touched: %+v", st)
			}
			lines, err := ReadAudit(audit)
			if err != nil || len(lines) == 0 {
				t.Fatalf("audit: %d lines, %v", len(lines), err)
			}
			for _, l := range lines {
				if strings.Contains(l.Body, "password") {
					t.Errorf("audit holds a password: %+v", l)
				}
			}
		})
	}
}

// A Manager.Reset ends every session; HEAD answers like GET.
func TestManagerResetEndsSessions(t *testing.T) {
	sim, err := Start(Config{Hosts: 1, Profile: "openbmc"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	u := sim.URL(0)
	r, _ := req(t, "POST", u+v1+"/SessionService/Sessions", `{"UserName":"admin","Password":"password"}`, nil)
	tok := map[string]string{"X-Auth-Token": r.Header.Get("X-Auth-Token")}
	if r, _ := req(t, http.MethodPost, u+v1+"/Managers/bmc/Actions/Manager.Reset", `{"ResetType":"GracefulRestart"}`, tok); r.StatusCode != 204 {
		t.Fatalf("Manager.Reset: %d", r.StatusCode)
	}
	if r, _ := req(t, "GET", u+v1+"/Systems/system", "", tok); r.StatusCode != 401 {
		t.Fatalf("session after a BMC reset: %d", r.StatusCode)
	}
	if st := sim.State(0); st.BMCResets != 1 || st.Sessions != 0 {
		t.Fatalf("state %+v", st)
	}
}

// Faults, TLS, MaxSessions, latency and /sim/state work the same on every
// profile (they sit in front of the engine).
func TestCommonFeaturesEveryProfile(t *testing.T) {
	for _, name := range Profiles() {
		t.Run(name, func(t *testing.T) {
			sim, err := Start(Config{Hosts: 1, Profile: name, TLS: true, MaxSessions: 2, Latency: 5 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			if !strings.HasPrefix(sim.URL(0), "https://") || !strings.HasPrefix(sim.Address(0), "redfish://") {
				t.Fatalf("TLS: URL %s Address %s", sim.URL(0), sim.Address(0))
			}
			c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
			do := func(method, url, body string) *http.Response {
				r, _ := http.NewRequest(method, url, strings.NewReader(body))
				r.SetBasicAuth("admin", "password")
				resp, err := c.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			u, sys := sim.URL(0), sim.prof.systems[0].path
			start := time.Now()
			if r := do("GET", u+sys, ""); r.StatusCode != 200 || time.Since(start) < 5*time.Millisecond {
				t.Fatalf("GET over TLS: %d in %s", r.StatusCode, time.Since(start))
			}
			if sim.prof.sessions != "" {
				for i := 0; i < 3; i++ {
					if r := do("POST", u+sim.prof.sessions, `{"UserName":"admin","Password":"password"}`); r.StatusCode != 201 {
						t.Fatalf("login %d: %d", i, r.StatusCode)
					}
				}
				if st := sim.State(0); st.Sessions != 2 || st.Logins != 3 {
					t.Errorf("MaxSessions 2 after 3 logins: %+v", st)
				}
			}
			if err := sim.SetFault(0, FaultHTTP500); err != nil {
				t.Fatal(err)
			}
			if r := do("GET", u+sys, ""); r.StatusCode != 500 {
				t.Errorf("http500 fault: %d", r.StatusCode)
			}
			_ = sim.SetFault(0, FaultNone)
			r, err := c.Get(u + "/sim/state")
			if err != nil {
				t.Fatal(err)
			}
			var st State
			err = json.NewDecoder(r.Body).Decode(&st)
			r.Body.Close()
			if err != nil || len(st.Systems) != len(sim.prof.systems) || len(st.VirtualMedia) != len(sim.prof.media) || st.Systems[0].Path != sys {
				t.Errorf("/sim/state: %+v, %v", st, err)
			}
			if len(sim.SystemAddresses(0)) != len(st.Systems) || sim.SystemMAC(0, len(st.Systems)) != "" {
				t.Errorf("SystemAddresses %v for %d systems", sim.SystemAddresses(0), len(st.Systems))
			}
		})
	}
}
