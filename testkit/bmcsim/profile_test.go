package bmcsim

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Every profile loads, every link in it resolves, collections count their
// members, and every system has what all profiles promise (DESIGN.md).
func TestProfilesLoad(t *testing.T) {
	names := Profiles()
	for _, want := range []string{"default", "basic-only", "system-vmedia-patch", "ilo", "idrac", "openbmc", "blade", "no-vmedia"} {
		if !slices.Contains(names, want) {
			t.Errorf("Profiles() = %v lacks %s", names, want)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("Profiles() not sorted: %v", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p, err := loadProfile(name)
			if err != nil {
				t.Fatal(err)
			}
			if p.source == "" || ProfileSource(name) != p.source {
				t.Error("no profile.source")
			}
			v := &vars{index: 7, prefix: [4]byte{0x52, 0x54, 0, 0}}
			for pth, r := range p.res {
				var tree any
				if r.static != nil {
					if err := json.Unmarshal(r.static, &tree); err != nil {
						t.Fatal(err)
					}
				} else {
					b, err := json.Marshal(v.copyMap(r.tree))
					if err != nil {
						t.Fatal(err)
					}
					_ = json.Unmarshal(b, &tree)
				}
				walkRefs(tree, func(ref string) {
					if strings.Contains(ref, "#") {
						ref, _, _ = strings.Cut(ref, "#")
					}
					if p.res[ref] == nil {
						t.Errorf("%s links %s, which the fixture lacks", pth, ref)
					}
				})
				m := tree.(map[string]any)
				if members, ok := m["Members"].([]any); ok && r.kind != kindSessions {
					if n, _ := m["Members@odata.count"].(float64); int(n) != len(members) {
						t.Errorf("%s: Members@odata.count %v, %d members", pth, m["Members@odata.count"], len(members))
					}
				}
				if r.kind == kindSystem {
					checkSystem(t, pth, m)
				}
			}
			for j, s := range p.fsys {
				var hw struct{ NICs []struct{ MAC string } }
				if err := json.Unmarshal([]byte(v.mustExpand(string(s.Expect.Hardware))), &hw); err != nil {
					t.Fatalf("systems[%d].expect.hardware: %v", j, err)
				}
				if len(hw.NICs) == 0 || hw.NICs[0].MAC != v.mustExpand(s.BootMAC) {
					t.Errorf("systems[%d]: the first expected NIC %+v is not the boot MAC %s", j, hw.NICs, v.mustExpand(s.BootMAC))
				}
				if len(s.Expect.BMC) == 0 {
					t.Errorf("systems[%d]: no expect.bmc", j)
				}
			}
		})
	}
}

func checkSystem(t *testing.T, pth string, m map[string]any) {
	t.Helper()
	for _, k := range []string{"UUID", "BiosVersion", "Manufacturer", "Model", "SerialNumber", "Boot", "Actions", "Links", "EthernetInterfaces", "Processors"} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s has no %s", pth, k)
		}
	}
	boot, _ := m["Boot"].(map[string]any)
	targets := strs(boot["BootSourceOverrideTarget@Redfish.AllowableValues"])
	for _, want := range []string{"Cd", "Pxe", "Hdd"} {
		if !slices.Contains(targets, want) {
			t.Errorf("%s: boot targets %v lack %s", pth, targets, want)
		}
	}
	if _, ok := boot["BootSourceOverrideMode"]; !ok {
		t.Errorf("%s: no Boot.BootSourceOverrideMode", pth)
	}
	acts, _ := m["Actions"].(map[string]any)
	reset, _ := acts["#ComputerSystem.Reset"].(map[string]any)
	if len(strs(reset["ResetType@Redfish.AllowableValues"])) == 0 {
		t.Errorf("%s: Reset action without AllowableValues", pth)
	}
	links, _ := m["Links"].(map[string]any)
	if mb, _ := links["ManagedBy"].([]any); len(mb) == 0 {
		t.Errorf("%s: no Links.ManagedBy", pth)
	}
	if _, ok := m["Storage"]; !ok {
		if _, ok := m["SimpleStorage"]; !ok {
			t.Errorf("%s: neither Storage nor SimpleStorage", pth)
		}
	}
}

// walkRefs calls f with every @odata.id below x (not x's own).
func walkRefs(x any, f func(string)) {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			if k == "@odata.id" {
				continue
			}
			if m, ok := v.(map[string]any); ok {
				if id, ok := m["@odata.id"].(string); ok {
					f(id)
				}
			}
			if l, ok := v.([]any); ok {
				for _, e := range l {
					if m, ok := e.(map[string]any); ok {
						if id, ok := m["@odata.id"].(string); ok {
							f(id)
						}
					}
				}
			}
			walkRefs(v, f)
		}
	case []any:
		for _, v := range t {
			walkRefs(v, f)
		}
	}
}

func TestUnknownProfile(t *testing.T) {
	_, err := Start(Config{Hosts: 1, Profile: "hal9000"})
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "basic-only") || !strings.Contains(err.Error(), "hal9000") {
		t.Fatalf("Start with an unknown profile: %v", err)
	}
}

func TestPlaceholders(t *testing.T) {
	v := &vars{index: 0x102, prefix: [4]byte{0x52, 0x54, 0, 0}}
	for in, want := range map[string]string{
		"SIM{{serial}}":      "SIM000258",
		"{{index}}":          "258",
		"{{mac}}":            "52:54:00:00:01:02",
		"{{mac:3}}":          "52:54:00:03:01:02",
		"{{MAC:16}}":         "52:54:00:10:01:02",
		"{{uuid}}":           "00000000-0000-4000-8000-000000000102",
		"{{uuid:2}}/{{mac}}": "00000000-0000-4000-8002-000000000102/52:54:00:00:01:02",
	} {
		if got, err := expand(in, v); err != nil || got != want {
			t.Errorf("expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"{{nope}}", "{{mac:300}}", "{{mac", "{{serial:1}}"} {
		if _, err := expand(bad, v); err == nil {
			t.Errorf("expand(%q) accepted", bad)
		}
	}
}
