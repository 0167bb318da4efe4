package bmcsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Storage (DMTF Storage v1_8 StorageControllers[].SupportedRAIDTypes,
// VolumeCollection, Volume v1_6, Drive v1_9): POST to a storage's Volumes
// creates a volume {RAIDType, CapacityBytes, Name, Links.Drives}; DELETE
// removes it. A collection listing @Redfish.OperationApplyTimeSupport
// creates through a task (Knobs.JobMinutes): Immediate starts it now,
// OnReset at the system's next power-on; without it the volume exists at
// once (201 + Location). #Drive.SecureErase and #Volume.Initialize run as
// tasks (Knobs.EraseMinutes; a Fast initialize Knobs.JobMinutes).

// minDrives and dataDrives per RAID level (SNIA / DMTF RAIDType).
var raidRules = map[string]struct {
	min  int
	data func(n int) int
	typ  string // Volume.VolumeType
}{
	"RAID0":  {1, func(n int) int { return n }, "NonRedundant"},
	"RAID1":  {2, func(n int) int { return n / 2 }, "Mirrored"},
	"RAID5":  {3, func(n int) int { return n - 1 }, "StripedWithParity"},
	"RAID6":  {4, func(n int) int { return n - 2 }, "StripedWithParity"},
	"RAID10": {4, func(n int) int { return n / 2 }, "SpannedMirrors"},
}

// VolumeState is one volume as /sim/state shows it.
type VolumeState struct {
	Path          string   `json:"path"`
	RAIDType      string   `json:"raidType"`
	CapacityBytes int64    `json:"capacityBytes"`
	Drives        []string `json:"drives"`
	// Ready is false while a create task has not completed.
	Ready bool `json:"ready"`
}

// DriveState is one drive as /sim/state shows it.
type DriveState struct {
	Path   string `json:"path"`
	Erased int    `json:"erased"`           // completed secure erases
	Volume string `json:"volume,omitempty"` // the volume it belongs to
}

type volume struct {
	storage  int
	id, path string
	name     string
	raid     string
	capacity int64
	drives   []int
	ready    bool
}

// volumeAt is the volume at pth (nil: none). b.mu held.
func (b *bmc) volumeAt(pth string) *volume {
	for _, v := range b.vols {
		if v.path == pth && v.ready {
			return v
		}
	}
	return nil
}

// driveVolume is the volume holding drive i (nil: none). b.mu held.
func (b *bmc) driveVolume(i int) *volume {
	for _, v := range b.vols {
		if slices.Contains(v.drives, i) {
			return v
		}
	}
	return nil
}

// busyDrive is the running task acting on drive path (nil: none). b.mu held.
func (b *bmc) busyTask(pth string) *task {
	for _, t := range b.tasks {
		if t.target == pth && t.running() {
			return t
		}
	}
	return nil
}

// createVolume is a POST to a VolumeCollection.
func (s *Sim) createVolume(w http.ResponseWriter, b *bmc, col *resource, body []byte) {
	p := b.prof
	st := p.storage[col.d2.storage]
	var req struct {
		Name          string
		RAIDType      string
		CapacityBytes *int64
		Links         struct {
			Drives []struct {
				ID string `json:"@odata.id"`
			}
		}
		ApplyTime string `json:"@Redfish.OperationApplyTime"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
		return
	}
	ctrl, _ := st.tree["Name"].(string)
	if ctrl == "" {
		ctrl = st.path
	}
	rule, known := raidRules[req.RAIDType]
	switch {
	case req.RAIDType == "":
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyMissing", "RAIDType is required: one of "+strings.Join(st.d2.raidTypes, ", "), "#/RAIDType")
		return
	case len(st.d2.raidTypes) == 0:
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList",
			"The controller "+ctrl+" builds no RAID volumes (it lists no SupportedRAIDTypes)", "#/RAIDType")
		return
	case !known || !slices.Contains(st.d2.raidTypes, req.RAIDType):
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList",
			"The value "+quote(req.RAIDType)+" for the property RAIDType is not in the list of acceptable values: the controller "+ctrl+" builds "+strings.Join(st.d2.raidTypes, ", "), "#/RAIDType")
		return
	}
	if oat := col.d2.applyTimes; req.ApplyTime != "" && !slices.Contains(append([]string{"Immediate"}, oat...), req.ApplyTime) {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList",
			"@Redfish.OperationApplyTime "+quote(req.ApplyTime)+" is not supported here: use one of "+strings.Join(append([]string{"Immediate"}, oat...), ", "), "#/@Redfish.OperationApplyTime")
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	var drives []int
	var smallest int64
	for k, d := range req.Links.Drives {
		i := -1
		for _, di := range st.d2.drives {
			if p.drives[di].path == strings.TrimSuffix(d.ID, "/") {
				i = di
			}
		}
		rel := "#/Links/Drives/" + strconv.Itoa(k)
		switch {
		case i < 0:
			writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", "Drive "+quote(d.ID)+" is not a drive of "+st.path, rel)
			return
		case slices.Contains(drives, i):
			writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyValueConflict", "Drive "+d.ID+" is listed twice", rel)
			return
		case b.driveVolume(i) != nil:
			writeErrorRelated(w, http.StatusConflict, "Base.1.8.ResourceInUse", "Drive "+d.ID+" already belongs to volume "+b.driveVolume(i).path+": delete it first", rel)
			return
		case b.busyTask(d.ID) != nil:
			writeErrorRelated(w, http.StatusConflict, "Base.1.8.ResourceInUse", "Drive "+d.ID+" is being erased (task "+b.busyTask(d.ID).id+")", rel)
			return
		}
		drives = append(drives, i)
		if c := p.drives[i].d2.capacity; smallest == 0 || c < smallest {
			smallest = c
		}
	}
	if len(drives) < rule.min {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyValueConflict",
			fmt.Sprintf("%s needs at least %d drives; Links.Drives lists %d", req.RAIDType, rule.min, len(drives)), "#/Links/Drives")
		return
	}
	most := smallest * int64(rule.data(len(drives)))
	size := most
	if req.CapacityBytes != nil && *req.CapacityBytes > 0 {
		size = *req.CapacityBytes
	}
	if size > most {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.12.PropertyValueOutOfRange",
			fmt.Sprintf("CapacityBytes %d is more than %s of these drives holds (%d)", size, req.RAIDType, most), "#/CapacityBytes")
		return
	}
	b.nextVol++
	v := &volume{storage: st.idx, id: strconv.Itoa(b.nextVol), raid: req.RAIDType, capacity: size, drives: drives, name: req.Name}
	v.path = col.path + "/" + v.id
	if v.name == "" {
		v.name = "Volume " + v.id
	}
	b.vols = append(b.vols, v)
	b.mutations++
	if len(col.d2.applyTimes) == 0 {
		v.ready = true
		w.Header().Set("Location", v.path)
		writeJSON(w, http.StatusCreated, b.volumeDoc(v, col), "")
		return
	}
	wait := -1
	if req.ApplyTime == "OnReset" {
		wait = st.d2.sys
	}
	t := s.newTask(b, TaskVolumeCreate, "Create "+v.name, v.path, b.knobs.JobMinutes, wait, now)
	t.result = v.path
	t.finish = func(time.Time) { v.ready = true }
	b.accepted(w, t)
}

// deleteVolume is DELETE of a volume; OnReset (where offered) waits for the
// system's next power-on.
func (s *Sim) deleteVolume(w http.ResponseWriter, b *bmc, v *volume, body []byte) {
	col := b.prof.res[b.prof.storage[v.storage].d2.volumes]
	var req struct {
		ApplyTime string `json:"@Redfish.OperationApplyTime"`
	}
	_ = json.Unmarshal(body, &req)
	if req.ApplyTime == "OnReset" && slices.Contains(col.d2.applyTimes, "OnReset") {
		t := s.newTask(b, TaskVolumeDelete, "Delete "+v.name, v.path, b.knobs.JobMinutes, col.d2.sys, time.Now())
		t.finish = func(time.Time) { b.removeVolume(v) }
		b.mutations++
		b.accepted(w, t)
		return
	}
	if t := b.busyTask(v.path); t != nil {
		writeError(w, http.StatusConflict, "Base.1.8.ResourceInUse", "volume "+v.path+" is busy: task "+t.id)
		return
	}
	b.removeVolume(v)
	b.mutations++
	w.WriteHeader(http.StatusNoContent)
}

func (b *bmc) removeVolume(v *volume) {
	b.vols = slices.DeleteFunc(b.vols, func(x *volume) bool { return x == v })
}

// initializeVolume is #Volume.Initialize.
func (s *Sim) initializeVolume(w http.ResponseWriter, b *bmc, v *volume, body []byte) {
	var req struct{ InitializeType string }
	_ = json.Unmarshal(body, &req)
	minutes := b.knobs.JobMinutes
	switch req.InitializeType {
	case "", "Fast":
	case "Slow":
		minutes = b.knobs.EraseMinutes
	default:
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterNotSupported", "InitializeType "+quote(req.InitializeType)+" is not one of Fast, Slow", "#/InitializeType")
		return
	}
	if t := b.busyTask(v.path); t != nil {
		writeError(w, http.StatusConflict, "Base.1.8.ResourceInUse", "volume "+v.path+" is busy: task "+t.id)
		return
	}
	t := s.newTask(b, TaskInitialize, "Initialize "+v.name, v.path, minutes, -1, time.Now())
	b.mutations++
	b.accepted(w, t)
}

// secureErase is #Drive.SecureErase.
func (s *Sim) secureErase(w http.ResponseWriter, b *bmc, res *resource) {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	if v := b.driveVolume(res.idx); v != nil {
		writeError(w, http.StatusConflict, "Base.1.8.ResourceInUse", "drive "+res.path+" belongs to volume "+v.path+": delete the volume first")
		return
	}
	if t := b.busyTask(res.path); t != nil {
		writeError(w, http.StatusConflict, "Base.1.8.ResourceInUse", "drive "+res.path+" is already being erased: task "+t.id)
		return
	}
	t := s.newTask(b, TaskErase, "Secure erase "+res.path, res.path, b.knobs.EraseMinutes, -1, now)
	i := res.idx
	t.finish = func(time.Time) {
		if b.erased == nil {
			b.erased = make([]int, len(b.prof.drives))
		}
		b.erased[i]++
	}
	b.mutations++
	b.accepted(w, t)
}

// volumeDoc is v as a Volume resource. b.mu held.
func (b *bmc) volumeDoc(v *volume, col *resource) doc {
	links := make([]doc, 0, len(v.drives))
	for _, i := range v.drives {
		links = append(links, doc{"@odata.id": b.prof.drives[i].path})
	}
	d := doc{"@odata.id": v.path, "@odata.type": "#Volume.v1_6_2.Volume", "Id": v.id, "Name": v.name,
		"RAIDType": v.raid, "VolumeType": raidRules[v.raid].typ, "CapacityBytes": v.capacity, "BlockSizeBytes": 512,
		"Encrypted": false, "Status": doc{"State": "Enabled", "Health": "OK"}, "Links": doc{"Drives": links},
		"Actions": doc{"#Volume.Initialize": doc{"target": v.path + "/Actions/Volume.Initialize",
			"InitializeType@Redfish.AllowableValues": []string{"Fast", "Slow"}}}}
	if len(col.d2.applyTimes) > 0 {
		d["@Redfish.OperationApplyTimeSupport"] = doc{"@odata.type": "#Settings.v1_3_5.OperationApplyTimeSupport", "SupportedValues": col.d2.applyTimes}
	}
	if t := b.busyTask(v.path); t != nil && t.kind == TaskInitialize {
		d["Status"] = doc{"State": "Updating", "Health": "OK"}
		d["Operations"] = []doc{{"OperationName": "Initialize", "PercentageComplete": t.percent, "AssociatedTask": doc{"@odata.id": b.taskPath(t)}}}
	}
	return d
}

// overlayVolumes lists the ready volumes of collection r. b.mu held.
func (b *bmc) overlayVolumes(r *resource, d doc) {
	members := []doc{}
	for _, v := range b.vols {
		if v.ready && v.storage == r.d2.storage {
			members = append(members, doc{"@odata.id": v.path})
		}
	}
	d["Members"] = members
	d["Members@odata.count"] = len(members)
}

// overlayDrive shows an erase in progress and the drive's volume. b.mu held.
func (b *bmc) overlayDrive(r *resource, d doc) {
	if r.idx < 0 || r.d2 == nil || r.d2.storage < 0 {
		return
	}
	if t := b.busyTask(r.path); t != nil && t.kind == TaskErase {
		d["Operations"] = []doc{{"OperationName": "Erase", "PercentageComplete": t.percent, "AssociatedTask": doc{"@odata.id": b.taskPath(t)}}}
	}
	if v := b.driveVolume(r.idx); v != nil && v.ready {
		links, _ := d["Links"].(map[string]any)
		if links == nil {
			links = doc{}
		}
		links["Volumes"] = []doc{{"@odata.id": v.path}}
		d["Links"] = links
	}
}

// storageStates is /sim/state's view of volumes and drives. b.mu held.
func (b *bmc) storageStates(st *State) {
	for _, v := range b.vols {
		vs := VolumeState{Path: v.path, RAIDType: v.raid, CapacityBytes: v.capacity, Ready: v.ready}
		for _, i := range v.drives {
			vs.Drives = append(vs.Drives, b.prof.drives[i].path)
		}
		st.Volumes = append(st.Volumes, vs)
	}
	for i, r := range b.prof.drives {
		ds := DriveState{Path: r.path}
		if b.erased != nil {
			ds.Erased = b.erased[i]
		}
		if v := b.driveVolume(i); v != nil {
			ds.Volume = v.path
		}
		st.Drives = append(st.Drives, ds)
	}
}
