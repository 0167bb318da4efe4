package bmcsim

import (
	"encoding/json"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"testing"
)

// TestExpand: $expand as the service root advertises it. The default
// profile (NoLinks, Levels, MaxLevels 3) answers the system with its
// collections, their members and the drives inline, its Links untouched;
// more levels than advertised or "*" are refused 400; a profile advertising
// nothing answers 501; the per-path GET counts tell the query apart.
func TestExpand(t *testing.T) {
	sim, err := Start(Config{Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	basic := map[string]string{"basic": "admin:password"}
	sys := sim.URL(0) + v1 + "/Systems/1"
	get := func(q string) (int, map[string]any) {
		t.Helper()
		r, body := req(t, "GET", sys+"?$expand="+url.QueryEscape(q), "", basic)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		return r.StatusCode, m
	}
	code, m := get(".($levels=3)")
	if code != 200 {
		t.Fatalf("$expand=.($levels=3): %d %v", code, m)
	}
	procs, _ := m["Processors"].(map[string]any)
	members, _ := procs["Members"].([]any)
	if len(members) != 2 {
		t.Fatalf("Processors not expanded with its members: %v", m["Processors"])
	}
	if p, _ := members[0].(map[string]any); p["Model"] != "Sim Xeon 16C" {
		t.Errorf("Processors.Members[0] = %v, want the CPU1 document", members[0])
	}
	stor, _ := m["Storage"].(map[string]any)
	sm, _ := stor["Members"].([]any)
	if len(sm) != 1 {
		t.Fatalf("Storage members: %v", stor)
	}
	drives, _ := sm[0].(map[string]any)["Drives"].([]any)
	if len(drives) != 1 || drives[0].(map[string]any)["Model"] != "Sim SSD 480" {
		t.Errorf("level 3 (the drives) not expanded: %v", drives)
	}
	links, _ := m["Links"].(map[string]any)
	mb, _ := links["ManagedBy"].([]any)
	if len(mb) != 1 || len(mb[0].(map[string]any)) != 1 {
		t.Errorf(`"." expanded the Links section: %v`, links)
	}
	if m["PowerState"] != "Off" {
		t.Errorf("expanded system lost its state overlay: PowerState %v", m["PowerState"])
	}

	code, m = get(".")
	procs, _ = m["Processors"].(map[string]any)
	members, _ = procs["Members"].([]any)
	if code != 200 || len(members) != 2 || len(members[0].(map[string]any)) != 1 {
		t.Errorf(`$expand=. : %d, Processors %v; want the collection with its members as links`, code, procs)
	}
	for _, q := range []string{".($levels=4)", "*", ".($levels=x)"} {
		if code, _ := get(q); code != 400 {
			t.Errorf("$expand=%s: %d, want 400", q, code)
		}
	}
	st := sim.State(0)
	if st.Gets["/redfish/v1/Systems/1?$expand=.($levels=3)"] != 1 || st.Gets["/redfish/v1/Systems/1?$expand=."] != 1 || st.Gets["/redfish/v1/Systems/1"] != 0 {
		t.Errorf("GET counts %v", st.Gets)
	}

	plain, err := Start(Config{Hosts: 1, Profile: "no-vmedia"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if r, _ := req(t, "GET", plain.URL(0)+plain.prof.systems[0].path+"?$expand=.", "", basic); r.StatusCode != 501 {
		t.Errorf("$expand on a profile advertising none: %d, want 501", r.StatusCode)
	}
}

// TestSelect: $select where the root advertises SelectQuery (idrac): the
// properties named and the @odata annotations, "A/B" keeping B of A, a
// property the resource lacks left out; with $expand, expanded then
// selected; a profile advertising no $select (ilo) answers 501.
func TestSelect(t *testing.T) {
	sim, err := Start(Config{Hosts: 1, Profile: "idrac"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	basic := map[string]string{"basic": "admin:password"}
	sys := sim.prof.systems[0].path
	get := func(s *Sim, q string) (int, map[string]any) {
		t.Helper()
		r, body := req(t, "GET", s.URL(0)+sys+"?"+q, "", basic)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		return r.StatusCode, m
	}
	code, m := get(sim, "$select="+url.QueryEscape("PowerState,Status/Health,NoSuchProperty"))
	keys := slices.Sorted(maps.Keys(m))
	if code != 200 || !reflect.DeepEqual(keys, []string{"@odata.context", "@odata.id", "@odata.type", "PowerState", "Status"}) &&
		!reflect.DeepEqual(keys, []string{"@odata.id", "@odata.type", "PowerState", "Status"}) {
		t.Errorf("$select: %d, keys %v", code, keys)
	}
	if st, _ := m["Status"].(map[string]any); len(st) != 1 || st["Health"] == nil {
		t.Errorf("$select=Status/Health: Status %v, want Health alone", m["Status"])
	}
	code, m = get(sim, "$expand="+url.QueryEscape(".")+"&$select=Processors")
	procs, _ := m["Processors"].(map[string]any)
	if code != 200 || procs["Members"] == nil || m["PowerState"] != nil {
		t.Errorf("$expand=.&$select=Processors: %d, %v", code, m)
	}
	if st := sim.State(0); st.Gets[sys+"?$select=PowerState,Status/Health,NoSuchProperty"] != 1 {
		t.Errorf("GET counts %v: want the $select read counted under its query", st.Gets)
	}

	ilo, err := Start(Config{Hosts: 1, Profile: "ilo"})
	if err != nil {
		t.Fatal(err)
	}
	defer ilo.Close()
	sys = ilo.prof.systems[0].path
	if code, _ := get(ilo, "$select=PowerState"); code != 501 {
		t.Errorf("$select on a profile advertising none: %d, want 501", code)
	}
}

// TestExpandLeavesStaticDocumentsAlone: static documents are decoded once
// and shared by every expanded answer, each expanding its own copy: after
// answers three levels deep (the storage's drives inline), the storage
// collection expanded one level still names its drives by link.
func TestExpandLeavesStaticDocumentsAlone(t *testing.T) {
	sim, err := Start(Config{Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	basic := map[string]string{"basic": "admin:password"}
	sys := sim.URL(0) + v1 + "/Systems/1"
	oneLevel := func() []any {
		t.Helper()
		r, body := req(t, "GET", sys+"/Storage?$expand=.", "", basic)
		if r.StatusCode != 200 {
			t.Fatalf("Storage?$expand=.: %d %s", r.StatusCode, body)
		}
		var col struct{ Members []map[string]any }
		if err := json.Unmarshal(body, &col); err != nil || len(col.Members) != 1 {
			t.Fatalf("Storage?$expand=.: %v %s", err, body)
		}
		drives, _ := col.Members[0]["Drives"].([]any)
		return drives
	}
	before := oneLevel()
	for range 2 {
		if r, body := req(t, "GET", sys+"?$expand="+url.QueryEscape(".($levels=3)"), "", basic); r.StatusCode != 200 {
			t.Fatalf("$expand=.($levels=3): %d %s", r.StatusCode, body)
		}
	}
	after := oneLevel()
	if len(after) != 1 || len(after[0].(map[string]any)) != 1 || !reflect.DeepEqual(after, before) {
		t.Errorf("Storage expanded one level after deeper answers: drives %v, want %v (a link alone): an earlier answer's expansion leaked into a shared document", after, before)
	}
}
