package bmcsim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Loading the day-two resources of a fixture: tasks, firmware inventory,
// BIOS with its settings object and attribute registry, storage with
// volumes and drives. Everything is found by following links from the
// service root and the systems, as a client would; nothing here names a
// path of a particular profile.

// dayTwoRes is what the engine needs of one day-two resource.
type dayTwoRes struct {
	// Bios: the initial Attributes, the settings object's path, its
	// SupportedApplyTimes, the attribute registry ("" / nil: none).
	attrs      map[string]any
	settings   string
	applyTimes []string
	registry   map[string]attrDef
	// Firmware: Updateable, and the item's Name.
	updateable bool
	name       string
	// Storage: the controller's SupportedRAIDTypes, its drives (indexes
	// into profile.drives), its VolumeCollection path and the system it
	// belongs to. VolumeCollection: its storage (resource.idx) and the
	// OperationApplyTimeSupport values. Drive: its CapacityBytes, storage.
	raidTypes []string
	drives    []int
	volumes   string
	sys       int
	capacity  int64
	storage   int
}

// mirror: property field of a resource shows firmware item fw's version.
type mirror struct {
	field string
	fw    int
}

func (p *profile) linkDayTwo() error {
	root := p.res[v1]
	p.sysBios = make([]int, len(p.systems))
	for j := range p.sysBios {
		p.sysBios[j] = -1
	}
	if ts := p.res[odataID(root.tree["Tasks"])]; ts != nil {
		p.taskService = ts.path
		p.tasks = odataID(ts.tree["Tasks"])
		if r := p.res[p.tasks]; r == nil || r.kind != kindTasks {
			return fmt.Errorf("TaskService %s: Tasks %q is not a TaskCollection in the fixture", ts.path, p.tasks)
		}
	}
	if us := p.res[odataID(root.tree["UpdateService"])]; us != nil {
		p.multipartPush, _ = us.tree["MultipartHttpPushUri"].(string)
		if inv := p.res[odataID(us.tree["FirmwareInventory"])]; inv != nil {
			members, _ := inv.tree["Members"].([]any)
			for _, m := range members {
				r := p.res[odataID(m)]
				if r == nil || r.kind != kindFirmware {
					return fmt.Errorf("FirmwareInventory member %s is not a SoftwareInventory in the fixture", odataID(m))
				}
				up, _ := r.tree["Updateable"].(bool)
				name, _ := r.tree["Name"].(string)
				r.idx, r.d2 = len(p.firmware), &dayTwoRes{updateable: up, name: name}
				p.firmware = append(p.firmware, r)
			}
		}
		acts, _ := us.tree["Actions"].(map[string]any)
		if (acts["#UpdateService.SimpleUpdate"] != nil || p.multipartPush != "") && p.tasks == "" {
			return fmt.Errorf("UpdateService offers updates but the service root links no TaskService (Tasks)")
		}
	}
	for j, sys := range p.systems {
		if r := p.res[odataID(sys.tree["Bios"])]; r != nil && r.kind == kindBios {
			if err := p.linkBios(r); err != nil {
				return err
			}
			p.sysBios[j] = r.idx
		}
		if sc := p.res[odataID(sys.tree["Storage"])]; sc != nil {
			members, _ := sc.tree["Members"].([]any)
			for _, m := range members {
				if r := p.res[odataID(m)]; r != nil && r.kind == kindStorage {
					p.linkStorage(r, j)
				}
			}
		}
	}
	for _, r := range p.firmware {
		for _, it := range asList(r.tree["RelatedItem"]) {
			t := p.res[odataID(it)]
			switch {
			case t == nil:
			case t.kind == kindBios:
				for j, k := range p.sysBios {
					if k == t.idx {
						p.systems[j].addMirror("BiosVersion", r)
					}
				}
			case t.kind == kindSystem:
				t.addMirror("BiosVersion", r)
			case strings.HasPrefix(typeOf(t.tree), "#Manager."):
				t.addMirror("FirmwareVersion", r)
			}
		}
	}
	for _, r := range p.res {
		if r.kind == kindBios && r.d2 == nil {
			r.d2 = &dayTwoRes{attrs: mapOf(r.tree["Attributes"])} // not linked from a system: read-only
		}
		if (r.kind == kindVolumes || r.kind == kindDrive) && r.d2 == nil {
			r.d2 = &dayTwoRes{sys: -1, storage: -1}
		}
	}
	return nil
}

// linkBios reads a Bios resource, its settings object and its registry.
func (p *profile) linkBios(r *resource) error {
	r.idx = len(p.bios)
	p.bios = append(p.bios, r)
	r.d2 = &dayTwoRes{attrs: mapOf(r.tree["Attributes"])}
	set, _ := r.tree["@Redfish.Settings"].(map[string]any)
	r.d2.settings = odataID(set["SettingsObject"])
	r.d2.applyTimes = strs(set["SupportedApplyTimes"])
	if r.d2.settings != "" {
		st := p.res[r.d2.settings]
		if st == nil || st.kind != kindBios {
			return fmt.Errorf("%s: @Redfish.Settings.SettingsObject %s is not a Bios resource in the fixture", r.path, r.d2.settings)
		}
		st.kind, st.idx, st.allow = kindBiosSettings, r.idx, "GET, HEAD, PATCH"
		st.d2 = &dayTwoRes{}
	}
	name, _ := r.tree["AttributeRegistry"].(string)
	if name == "" {
		return nil
	}
	for _, x := range p.res {
		if strings.HasPrefix(typeOf(x.tree), "#AttributeRegistry.") && x.tree["Id"] == name {
			reg, err := parseRegistry(x.tree)
			if err != nil {
				return fmt.Errorf("%s: %v", x.path, err)
			}
			r.d2.registry = reg
			for k := range r.d2.attrs {
				if _, ok := reg[k]; !ok {
					return fmt.Errorf("%s: attribute %s is not in registry %s", r.path, k, name)
				}
			}
		}
	}
	return nil
}

// linkStorage reads a Storage resource of system j, its drives and volumes.
func (p *profile) linkStorage(r *resource, j int) {
	r.idx = len(p.storage)
	p.storage = append(p.storage, r)
	r.d2 = &dayTwoRes{sys: j}
	for _, c := range asList(r.tree["StorageControllers"]) {
		if cm, ok := c.(map[string]any); ok {
			r.d2.raidTypes = append(r.d2.raidTypes, strs(cm["SupportedRAIDTypes"])...)
		}
	}
	for _, d := range asList(r.tree["Drives"]) {
		if dr := p.res[odataID(d)]; dr != nil && dr.kind == kindDrive {
			dr.idx = len(p.drives)
			dr.d2 = &dayTwoRes{storage: r.idx, sys: j, capacity: number(dr.tree["CapacityBytes"])}
			p.drives = append(p.drives, dr)
			r.d2.drives = append(r.d2.drives, dr.idx)
		}
	}
	if vc := p.res[odataID(r.tree["Volumes"])]; vc != nil && vc.kind == kindVolumes {
		r.d2.volumes = vc.path
		vc.idx = r.idx
		oats, _ := vc.tree["@Redfish.OperationApplyTimeSupport"].(map[string]any)
		vc.d2 = &dayTwoRes{storage: r.idx, sys: j, applyTimes: strs(oats["SupportedValues"])}
	}
}

// attrDef is one attribute of a BIOS attribute registry (DMTF
// AttributeRegistry v1_3: RegistryEntries.Attributes[]).
type attrDef struct {
	typ                    string // Enumeration, String, Integer, Boolean, Password
	values                 []string
	lower, upper           *int64
	minLen, maxLen         *int64
	readOnly, resetRequire bool
}

func parseRegistry(tree map[string]any) (map[string]attrDef, error) {
	ent, _ := tree["RegistryEntries"].(map[string]any)
	list := asList(ent["Attributes"])
	if len(list) == 0 {
		return nil, fmt.Errorf("no RegistryEntries.Attributes")
	}
	out := map[string]attrDef{}
	for i, x := range list {
		a, _ := x.(map[string]any)
		name, _ := a["AttributeName"].(string)
		if name == "" {
			return nil, fmt.Errorf("RegistryEntries.Attributes[%d] has no AttributeName", i)
		}
		d := attrDef{}
		d.typ, _ = a["Type"].(string)
		d.readOnly, _ = a["ReadOnly"].(bool)
		d.resetRequire, _ = a["ResetRequired"].(bool)
		for _, v := range asList(a["Value"]) {
			if vm, ok := v.(map[string]any); ok {
				if s, ok := vm["ValueName"].(string); ok {
					d.values = append(d.values, s)
				}
			}
		}
		d.lower, d.upper = optNumber(a["LowerBound"]), optNumber(a["UpperBound"])
		d.minLen, d.maxLen = optNumber(a["MinLength"]), optNumber(a["MaxLength"])
		switch d.typ {
		case "Enumeration", "String", "Integer", "Boolean", "Password":
		default:
			return nil, fmt.Errorf("attribute %s: Type %q is not Enumeration, String, Integer, Boolean or Password", name, d.typ)
		}
		out[name] = d
	}
	return out, nil
}

func asList(x any) []any {
	if raw, ok := x.(json.RawMessage); ok {
		var l []any
		_ = json.Unmarshal(raw, &l)
		return l
	}
	l, _ := x.([]any)
	return l
}

func mapOf(x any) map[string]any {
	m, _ := x.(map[string]any)
	return m
}

func typeOf(m map[string]any) string {
	s, _ := m["@odata.type"].(string)
	return s
}

func number(x any) int64 {
	if n, ok := x.(json.Number); ok {
		v, _ := n.Int64()
		return v
	}
	if f, ok := x.(float64); ok {
		return int64(f)
	}
	return 0
}

func optNumber(x any) *int64 {
	if x == nil {
		return nil
	}
	v := number(x)
	return &v
}

// sortedKeys are m's keys in order.
func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// addMirror makes field show firmware item fw's version, when the fixture
// gives both the same value (iLO's manager says "iLO 5 v3.03" where its
// inventory says "3.03": no mirror then).
func (r *resource) addMirror(field string, fw *resource) {
	if r.tree[field] != nil && r.tree[field] == fw.tree["Version"] {
		r.mirrors = append(r.mirrors, mirror{field, fw.idx})
	}
}
