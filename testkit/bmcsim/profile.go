package bmcsim

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

// A profile is one BMC shape: an embedded JSON fixture (profiles/NAME.json)
// holding a map of Redfish path → resource document, as DMTF's
// Redfish-Mockup-Server serves a mockup, plus a "profile" section for what
// is not a resource (flags, the published shape it is modelled on, the
// hand-written expectations). See DESIGN.md for the format.

//go:embed profiles/*.json
var profileFiles embed.FS

// DefaultProfile is the profile of a Config with Profile "".
const DefaultProfile = "default"

// fixture is a profile file as written.
type fixture struct {
	Profile struct {
		Source string `json:"source"`
		// SessionService: the service root offers a session service
		// (checked against the resources at load).
		SessionService bool `json:"sessionService"`
		// InsertMediaNeedsTransferProtocolType: InsertMedia without
		// TransferProtocolType answers 400 ActionParameterMissing.
		InsertMediaNeedsTransferProtocolType bool `json:"insertMediaNeedsTransferProtocolType"`
		// ODataETag: systems and virtual media carry @odata.etag in the
		// body too (the ETag header is always sent).
		ODataETag bool `json:"odataEtag"`
		// NoPowerState: systems carry no PowerState (as some BMCs serve
		// them before the host's first power-on); resets still work.
		NoPowerState bool `json:"noPowerState"`
		// Systems in order: system 0 is Sim.Address(i)'s.
		Systems []fixtureSystem `json:"systems"`
		// Day two (DESIGN.md, "Day two"). TaskIDPrefix goes before each
		// task's number (iDRAC: "JID_"); TaskInAccepted: a 202 carries the
		// Task in its body (bmcweb) instead of an empty body (iLO, iDRAC);
		// BiosValidateOnPatch: a PATCH of Bios/Settings is checked against
		// the attribute registry at once (400), else at the next reset
		// (@Redfish.Settings.Messages, as iLO does); BiosNeedsApplyTime:
		// pending settings PATCHed without @Redfish.SettingsApplyTime are
		// never applied (iDRAC stages them until a job is made).
		TaskIDPrefix        string `json:"taskIdPrefix"`
		TaskInAccepted      bool   `json:"taskInAccepted"`
		BiosValidateOnPatch bool   `json:"biosValidateOnPatch"`
		BiosNeedsApplyTime  bool   `json:"biosNeedsApplyTime"`
	} `json:"profile"`
	Resources map[string]json.RawMessage `json:"resources"`
}

type fixtureSystem struct {
	Path    string `json:"path"`
	BootMAC string `json:"bootMAC"`
	Expect  struct {
		Hardware json.RawMessage `json:"hardware"`
		BMC      json.RawMessage `json:"bmc"`
	} `json:"expect"`
}

// Resource kinds: what the engine overlays from state.
const (
	kindStatic = iota
	kindSystem
	kindChassis
	kindMedia
	kindSessions
	kindTasks
	kindFirmware
	kindBios
	kindBiosSettings
	kindStorage
	kindVolumes
	kindDrive
	kindThermal // legacy Chassis Thermal (health.go)
	kindPower   // legacy Chassis Power (health.go)
	// The newer sensor resources (health.go): ThermalSubsystem's
	// ThermalMetrics and Fans, PowerSubsystem's PowerSupplies, and the
	// chassis' Sensors.
	kindThermalMetrics
	kindFan
	kindPowerSupply
	kindSensor
)

// resource is one pre-parsed fixture document.
type resource struct {
	path string
	kind int
	// static is the served body of a resource with no placeholder and
	// nothing overlaid; nil otherwise.
	static []byte
	// staticDoc is static decoded once (staticTree), for the expanded
	// reads that embed it: each takes a copy (copyDoc) instead of
	// decoding the body again.
	staticOnce sync.Once
	staticDoc  map[string]any
	// rootOnce, rootBody: the service root's answer (static with the
	// AccountService and EventService links the simulator adds), built
	// once per profile instead of decoded and encoded at every GET.
	rootOnce sync.Once
	rootBody []byte
	// tree is the document: maps and slices, subtrees with nothing to
	// substitute frozen as json.RawMessage, placeholder strings as tmpl.
	tree map[string]any
	// idx is the system (kindSystem, kindChassis: -1 when the chassis
	// links none) or the virtual media device (kindMedia).
	idx int
	// ComputerSystem: the values PATCH and Reset accept.
	bootTargets, bootModes, resetTypes []string
	// httpBootURI: the system's Boot has HttpBootUri (PATCH takes it).
	httpBootURI bool
	// VirtualMedia: has InsertMedia (then PATCH is refused).
	hasInsert bool
	// allow is the Allow header of a GET (sushy PATCHes a VirtualMedia
	// without actions only when its GET allows PATCH).
	allow string
	// has lists the top-level keys the fixture gives (overlays only touch
	// keys the shape has).
	has map[string]bool
	// mirrors are properties showing a firmware item's version (a
	// system's BiosVersion, a manager's FirmwareVersion).
	mirrors []mirror
	// Day two, per kind (daytwo_load.go).
	d2 *dayTwoRes
}

// action is a POST target found in some resource's Actions.
type action struct {
	name    string // e.g. #ComputerSystem.Reset
	res     *resource
	allowed []string // ResetType@Redfish.AllowableValues
	// protocols: SimpleUpdate's TransferProtocol@Redfish.AllowableValues.
	protocols []string
}

// profile is a loaded fixture, shared read-only by every BMC and Sim.
type profile struct {
	// firstDriveOnce computes firstDrivePath (health.go).
	firstDriveOnce sync.Once
	firstDrivePath string
	name, source   string
	res            map[string]*resource
	actions        map[string]action
	systems        []*resource // in fixture order
	media          []*resource // sorted by path
	// sessions is the sessions collection's path; "" without a session
	// service (HTTP Basic only).
	sessions   string
	needsProto bool
	odataETag  bool
	noPower    bool
	// cdMedia is the index of the first device taking CD or DVD (-1: none).
	cdMedia int
	initSys []sysState
	initMed []mediaState
	fsys    []fixtureSystem
	// expand is the $expand support the service root advertises.
	expand expandSupport
	// selects: the service root advertises $select (select.go).
	selects bool
	// Day two: the task collection and service ("" without a
	// TaskService), the multipart push URI, firmware items in
	// FirmwareInventory order, BIOS resources, storage, drives; sysBios
	// is each system's BIOS (-1: none).
	tasks, taskService, multipartPush string
	taskPrefix                        string
	taskInAccepted                    bool
	biosValidate, biosNeedsApplyTime  bool
	firmware                          []*resource
	bios                              []*resource
	storage                           []*resource
	drives                            []*resource
	sysBios                           []int
}

type tmpl string

var (
	profMu    sync.Mutex
	profCache = map[string]*profile{}
)

// Profiles are the names of the built-in profiles, sorted.
func Profiles() []string {
	ents, _ := fs.ReadDir(profileFiles, "profiles")
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(out)
	return out
}

// ProfileSource is the one-line description of the published shape a
// profile is modelled on ("" for an unknown name).
func ProfileSource(name string) string {
	p, err := loadProfile(name)
	if err != nil {
		return ""
	}
	return p.source
}

// loadProfile parses a profile once per process; later calls share it.
func loadProfile(name string) (*profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	profMu.Lock()
	defer profMu.Unlock()
	if p := profCache[name]; p != nil {
		return p, nil
	}
	raw, err := profileFiles.ReadFile("profiles/" + name + ".json")
	if err != nil || strings.ContainsAny(name, "/.") {
		return nil, fmt.Errorf("%w: profile %q is not one of %s", ErrConfig, name, strings.Join(Profiles(), ", "))
	}
	p, err := parseProfile(name, raw)
	if err != nil {
		return nil, fmt.Errorf("%w: profile %s: %v", ErrConfig, name, err)
	}
	profCache[name] = p
	return p, nil
}

func parseProfile(name string, raw []byte) (*profile, error) {
	var f fixture
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	p := &profile{name: name, source: f.Profile.Source, res: map[string]*resource{}, actions: map[string]action{},
		needsProto: f.Profile.InsertMediaNeedsTransferProtocolType, odataETag: f.Profile.ODataETag, noPower: f.Profile.NoPowerState, cdMedia: -1, fsys: f.Profile.Systems,
		taskPrefix: f.Profile.TaskIDPrefix, taskInAccepted: f.Profile.TaskInAccepted,
		biosValidate: f.Profile.BiosValidateOnPatch, biosNeedsApplyTime: f.Profile.BiosNeedsApplyTime}
	for pth, body := range f.Resources {
		if pth != path.Clean(pth) || !strings.HasPrefix(pth, v1) {
			return nil, fmt.Errorf("resource path %q: want a clean path under %s", pth, v1)
		}
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			return nil, fmt.Errorf("%s: %v", pth, err)
		}
		if id, _ := m["@odata.id"].(string); id != pth {
			return nil, fmt.Errorf("%s: @odata.id is %q", pth, id)
		}
		if err := checkPlaceholders(m); err != nil {
			return nil, fmt.Errorf("%s: %v", pth, err)
		}
		p.res[pth] = newResource(pth, m)
	}
	if err := p.link(f); err != nil {
		return nil, err
	}
	return p, nil
}

// link finds systems, media, sessions and actions, and checks the flags
// against the resources.
func (p *profile) link(f fixture) error {
	root := p.res[v1]
	if root == nil {
		return fmt.Errorf("no service root %s", v1)
	}
	if links, ok := root.tree["Links"].(map[string]any); ok {
		p.sessions = odataID(links["Sessions"])
	}
	p.expand = parseExpandSupport(root.tree)
	p.selects = parseSelectSupport(root.tree)
	_, hasSS := root.tree["SessionService"]
	if f.Profile.SessionService != (p.sessions != "" && hasSS) {
		return fmt.Errorf("profile.sessionService is %v but the service root has SessionService %v and Links.Sessions %q",
			f.Profile.SessionService, hasSS, p.sessions)
	}
	if p.sessions != "" {
		if r := p.res[p.sessions]; r == nil || r.kind != kindSessions {
			return fmt.Errorf("Links.Sessions %s is not a SessionCollection in the fixture", p.sessions)
		}
	}
	for i, s := range f.Profile.Systems {
		r := p.res[s.Path]
		if r == nil || r.kind != kindSystem {
			return fmt.Errorf("profile.systems[%d]: %s is not a ComputerSystem in the fixture", i, s.Path)
		}
		r.idx = len(p.systems)
		p.systems = append(p.systems, r)
		p.initSys = append(p.initSys, initialSystem(r))
	}
	paths := make([]string, 0, len(p.res))
	for pth := range p.res {
		paths = append(paths, pth)
	}
	sort.Strings(paths)
	for _, pth := range paths {
		r := p.res[pth]
		switch r.kind {
		case kindSystem:
			if r.idx < 0 {
				return fmt.Errorf("ComputerSystem %s is not listed in profile.systems", pth)
			}
		case kindMedia:
			r.idx = len(p.media)
			p.media = append(p.media, r)
			p.initMed = append(p.initMed, initialMedia(r))
			if p.cdMedia < 0 && takesCD(r.tree) {
				p.cdMedia = r.idx
			}
		}
		acts, _ := r.tree["Actions"].(map[string]any)
		for name, a := range acts {
			am, _ := a.(map[string]any)
			target, _ := am["target"].(string)
			if target == "" {
				continue
			}
			p.actions[target] = action{name: name, res: r, allowed: strs(am["ResetType@Redfish.AllowableValues"]),
				protocols: strs(am["TransferProtocol@Redfish.AllowableValues"])}
		}
	}
	if err := p.linkDayTwo(); err != nil {
		return err
	}
	for _, r := range p.res {
		if r.kind == kindChassis {
			r.idx = -1
			if links, ok := r.tree["Links"].(map[string]any); ok {
				if list, ok := links["ComputerSystems"].([]any); ok && len(list) > 0 {
					if s := p.res[odataID(list[0])]; s != nil && s.kind == kindSystem {
						r.idx = s.idx
					}
				}
			}
		}
		r.freeze()
	}
	if len(p.systems) == 0 {
		return fmt.Errorf("profile.systems is empty")
	}
	return nil
}

func newResource(pth string, m map[string]any) *resource {
	r := &resource{path: pth, tree: m, idx: -1, has: map[string]bool{}}
	for k := range m {
		r.has[k] = true
	}
	typ, _ := m["@odata.type"].(string)
	switch {
	case strings.HasPrefix(typ, "#ComputerSystem."):
		r.kind = kindSystem
		if boot, ok := m["Boot"].(map[string]any); ok {
			r.bootTargets = strs(boot["BootSourceOverrideTarget@Redfish.AllowableValues"])
			r.bootModes = strs(boot["BootSourceOverrideMode@Redfish.AllowableValues"])
			_, r.httpBootURI = boot["HttpBootUri"]
		}
		if len(r.bootModes) == 0 {
			r.bootModes = []string{"UEFI", "Legacy"}
		}
		if acts, ok := m["Actions"].(map[string]any); ok {
			if a, ok := acts["#ComputerSystem.Reset"].(map[string]any); ok {
				r.resetTypes = strs(a["ResetType@Redfish.AllowableValues"])
			}
		}
	case strings.HasPrefix(typ, "#Chassis."):
		r.kind = kindChassis
	case strings.HasPrefix(typ, "#VirtualMedia."):
		r.kind = kindMedia
		if acts, ok := m["Actions"].(map[string]any); ok {
			_, r.hasInsert = acts["#VirtualMedia.InsertMedia"]
		}
	case strings.HasPrefix(typ, "#SessionCollection."):
		r.kind = kindSessions
	case strings.HasPrefix(typ, "#TaskCollection."):
		r.kind = kindTasks
	case strings.HasPrefix(typ, "#SoftwareInventory."):
		r.kind = kindFirmware
	case strings.HasPrefix(typ, "#Bios."):
		r.kind = kindBios // or kindBiosSettings: see linkDayTwo
	case strings.HasPrefix(typ, "#Storage."):
		r.kind = kindStorage
	case strings.HasPrefix(typ, "#VolumeCollection."):
		r.kind = kindVolumes
	case strings.HasPrefix(typ, "#Drive."):
		r.kind = kindDrive
	case strings.HasPrefix(typ, "#Thermal."):
		r.kind = kindThermal
	case strings.HasPrefix(typ, "#Power."):
		r.kind = kindPower
	case strings.HasPrefix(typ, "#ThermalMetrics."):
		r.kind = kindThermalMetrics
	case strings.HasPrefix(typ, "#Fan."):
		r.kind = kindFan
	case strings.HasPrefix(typ, "#PowerSupply."):
		r.kind = kindPowerSupply
	case strings.HasPrefix(typ, "#Sensor."):
		r.kind = kindSensor
	}
	r.allow = "GET, HEAD"
	switch {
	case r.kind == kindSystem, r.kind == kindMedia && !r.hasInsert:
		r.allow = "GET, HEAD, PATCH"
	case r.kind == kindSessions, r.kind == kindVolumes:
		r.allow = "GET, HEAD, POST"
	}
	return r
}
