package bmc

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// Storage (DMTF Storage, StorageController, Volume, Drive): the system's
// Storage members with their controllers' SupportedRAIDTypes, drives
// (wherever they live: some BMCs link drives under Chassis, some serve
// them without Id) and volumes. A volume is created by POST to the
// storage's Volumes, with @Redfish.OperationApplyTime where the collection
// lists @Redfish.OperationApplyTimeSupport (PERC: a job, run at once or at
// the next reset); an erase is #Drive.SecureErase, else #Volume.Initialize
// of the volume holding the drive.

// StorageController is one Storage member of the system.
type StorageController struct {
	URI, ID, Name string
	// RAIDTypes are its controllers' SupportedRAIDTypes (none: it builds
	// no RAID volumes).
	RAIDTypes []string
	Drives    []Drive
	Volumes   []Volume
	// VolumesURI is its VolumeCollection ("" none); ApplyTimes the
	// collection's OperationApplyTimeSupport values (none: a create acts
	// at once).
	VolumesURI string
	ApplyTimes []string
}

// Drive is one drive of a storage.
type Drive struct {
	URI, ID, Name, Model string
	MediaType, Protocol  string
	CapacityBytes        int64
	State                string // Status.State
	// SecureErase is the #Drive.SecureErase target ("" not offered).
	SecureErase string
	// Volumes are the volumes it belongs to.
	Volumes []string
	// Operation is a running operation as the BMC shows it ("Erase 40%").
	Operation string
}

// Volume is one volume of a storage.
type Volume struct {
	URI, ID, Name, RAIDType string
	CapacityBytes           int64
	Drives                  []string
	State                   string
	// Initialize is the #Volume.Initialize target ("" not offered), with
	// its allowable InitializeTypes.
	Initialize      string
	InitializeTypes []string
}

// VolumeRequest says what volume to build.
type VolumeRequest struct {
	// Storage is the controller's Id or URI ("" when the system has
	// exactly one that builds RAID).
	Storage  string
	Name     string
	RAIDType string // one of the controller's RAIDTypes: RAID0, RAID1, …
	// CapacityBytes 0: all the drives hold.
	CapacityBytes int64
	Drives        []string // Ids or URIs of the controller's drives
}

// StorageOp is a storage mutation started or done.
type StorageOp struct {
	// Method is "Create", "Delete", "Drive.SecureErase" or
	// "Volume.Initialize".
	Method string
	// Target is the resource acted on (the storage for a create, the
	// drive or volume otherwise); Volume the volume created, when known.
	Target, Volume string
	// InitializeType is what a Volume.Initialize sent ("" none).
	InitializeType string
	// ApplyTime is the @Redfish.OperationApplyTime sent: OnReset waits
	// for the system's next power-on (the caller's to do).
	ApplyTime string
	// Task and Monitor follow the work (WaitTask); both "" and Done when
	// the BMC did it at once.
	Task, Monitor string
	Done          bool
}

type rfStorageDoc struct {
	ODataID            string `json:"@odata.id"`
	ID                 string `json:"Id"`
	Name               string
	StorageControllers []struct{ SupportedRAIDTypes []string }
	Controllers        rfLink
	Drives             []rfLink
	Volumes            rfLink
}

type rfDriveDoc struct {
	ID                  string `json:"Id"`
	Name, Model         string
	MediaType, Protocol string
	CapacityBytes       int64
	Status              struct{ State string }
	Actions             struct {
		SecureErase *struct {
			Target string `json:"target"`
		} `json:"#Drive.SecureErase"`
	}
	Links      struct{ Volumes []rfLink }
	Operations []struct {
		OperationName      string
		PercentageComplete *int
	}
}

type rfVolumeDoc struct {
	ID             string `json:"Id"`
	Name, RAIDType string
	CapacityBytes  int64
	Status         struct{ State string }
	Links          struct{ Drives []rfLink }
	Actions        struct {
		Initialize *struct {
			Target string   `json:"target"`
			Types  []string `json:"InitializeType@Redfish.AllowableValues"`
		} `json:"#Volume.Initialize"`
	}
}

type rfVolumeCollection struct {
	Members []rfLink
	Support *struct{ SupportedValues []string } `json:"@Redfish.OperationApplyTimeSupport"`
}

// Storage lists the system's storage controllers, drives and volumes.
func (c *Conn) Storage(ctx context.Context) ([]StorageController, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: storage needs a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	var out []StorageController
	err := c.rfCall(ctx, "storage read", func(ctx context.Context, s *rfSession) error {
		var err error
		out, err = c.storage(s)
		return err
	})
	return out, err
}

// storage reads every Storage member of the system (the members of one in
// parallel). c.mu held.
func (c *Conn) storage(s *rfSession) ([]StorageController, error) {
	d, err := c.discover(s)
	if err != nil {
		return nil, err
	}
	var sys struct{ Storage rfLink }
	if err := rfGet(s.api, d.system, &sys); err != nil {
		return nil, err
	}
	if sys.Storage.ID == "" {
		return nil, fmt.Errorf("%w: %s: %s links no Storage: RAID and erase cannot be driven through this BMC", errclass.ErrUnsupported, c.addr, short(d.system))
	}
	var col rfCollection
	if err := rfGet(s.api, sys.Storage.ID, &col); err != nil {
		return nil, err
	}
	f := &rfFetcher{s: s}
	docs := make([]rfStorageDoc, len(col.Members))
	g := f.group()
	for i, m := range col.Members {
		g.fetch(m.ID, &docs[i])
	}
	if err := g.wait(); err != nil {
		return nil, err
	}
	out := make([]StorageController, 0, len(docs))
	for i, sd := range docs {
		uri := col.Members[i].ID
		if sd.ODataID == "" && sd.ID == "" {
			continue // 404
		}
		sc, err := c.readStorage(f, uri, &sd)
		if err != nil {
			return nil, err
		}
		out = append(out, *sc)
	}
	return out, nil
}

// readStorage reads one storage's controllers, drives and volumes.
func (c *Conn) readStorage(f *rfFetcher, uri string, sd *rfStorageDoc) (*StorageController, error) {
	sc := &StorageController{URI: uri, ID: idOf(sd.ID, uri), Name: sd.Name, VolumesURI: sd.Volumes.ID}
	for _, x := range sd.StorageControllers {
		sc.RAIDTypes = appendNew(sc.RAIDTypes, x.SupportedRAIDTypes...)
	}
	var (
		ctrls rfCollection
		vols  rfVolumeCollection
	)
	g := f.group()
	if len(sd.StorageControllers) == 0 && sd.Controllers.ID != "" {
		g.fetch(sd.Controllers.ID, &ctrls)
	}
	g.fetch(sd.Volumes.ID, &vols)
	drives := make([]rfDriveDoc, len(sd.Drives))
	for i, l := range sd.Drives {
		g.fetch(l.ID, &drives[i])
	}
	if err := g.wait(); err != nil {
		return nil, err
	}
	if vols.Support != nil {
		sc.ApplyTimes = vols.Support.SupportedValues
	}
	cdocs := make([]struct{ SupportedRAIDTypes []string }, len(ctrls.Members))
	vdocs := make([]rfVolumeDoc, len(vols.Members))
	g = f.group()
	for i, m := range ctrls.Members {
		g.fetch(m.ID, &cdocs[i])
	}
	for i, m := range vols.Members {
		g.fetch(m.ID, &vdocs[i])
	}
	if err := g.wait(); err != nil {
		return nil, err
	}
	for _, x := range cdocs {
		sc.RAIDTypes = appendNew(sc.RAIDTypes, x.SupportedRAIDTypes...)
	}
	for i, dd := range drives {
		du := sd.Drives[i].ID
		dr := Drive{URI: du, ID: idOf(dd.ID, du), Name: dd.Name, Model: dd.Model, MediaType: dd.MediaType,
			Protocol: dd.Protocol, CapacityBytes: dd.CapacityBytes, State: dd.Status.State}
		if dd.Actions.SecureErase != nil {
			dr.SecureErase = dd.Actions.SecureErase.Target
		}
		for _, v := range dd.Links.Volumes {
			dr.Volumes = appendNew(dr.Volumes, v.ID)
		}
		for _, op := range dd.Operations {
			dr.Operation = op.OperationName
			if op.PercentageComplete != nil {
				dr.Operation += fmt.Sprintf(" %d%%", *op.PercentageComplete)
			}
		}
		sc.Drives = append(sc.Drives, dr)
	}
	for i, vd := range vdocs {
		vu := vols.Members[i].ID
		v := Volume{URI: vu, ID: idOf(vd.ID, vu), Name: vd.Name, RAIDType: vd.RAIDType, CapacityBytes: vd.CapacityBytes, State: vd.Status.State}
		for _, l := range vd.Links.Drives {
			v.Drives = append(v.Drives, l.ID)
			for k := range sc.Drives { // a drive whose document does not link back
				if sameRef(l.ID, "", sc.Drives[k].URI) {
					sc.Drives[k].Volumes = appendNew(sc.Drives[k].Volumes, vu)
				}
			}
		}
		if vd.Actions.Initialize != nil {
			v.Initialize, v.InitializeTypes = vd.Actions.Initialize.Target, vd.Actions.Initialize.Types
		}
		sc.Volumes = append(sc.Volumes, v)
	}
	return sc, nil
}

func appendNew(list []string, xs ...string) []string {
	for _, x := range xs {
		if x != "" && !slices.Contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}

// pickStorage is the controller ref names, or without one the only
// controller building RAID.
func (c *Conn) pickStorage(ctrls []StorageController, ref string) (*StorageController, error) {
	var ids, raid []string
	for i := range ctrls {
		if ref != "" && sameRef(ref, ctrls[i].ID, ctrls[i].URI) {
			return &ctrls[i], nil
		}
		ids = append(ids, ctrls[i].ID)
		if len(ctrls[i].RAIDTypes) > 0 {
			raid = append(raid, ctrls[i].ID)
		}
	}
	if ref == "" && len(raid) == 1 {
		for i := range ctrls {
			if ctrls[i].ID == raid[0] {
				return &ctrls[i], nil
			}
		}
	}
	if ref == "" {
		return nil, fmt.Errorf("%w: %s: name the storage controller: %d of the system's controllers (%s) build RAID", errclass.ErrFailed, c.addr, len(raid), strings.Join(ids, ", "))
	}
	return nil, fmt.Errorf("%w: %s: no storage controller %q; the system has %s", errclass.ErrFailed, c.addr, ref, strings.Join(ids, ", "))
}

// CreateVolume: see DayTwo. The controller, RAID type and drives are
// checked before the guard (nothing sent when one is wrong); the POST
// alone runs inside it.
func (c *Conn) CreateVolume(ctx context.Context, g *guard.Guard, host string, req VolumeRequest) (*StorageOp, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: storage needs a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	if req.RAIDType == "" || len(req.Drives) == 0 || req.CapacityBytes < 0 {
		return nil, fmt.Errorf("%w: volume request needs a RAIDType, at least one drive and CapacityBytes >= 0 (got %q, %d drives, %d)", errclass.ErrFailed, req.RAIDType, len(req.Drives), req.CapacityBytes)
	}
	ctrls, err := c.Storage(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := c.pickStorage(ctrls, req.Storage)
	if err != nil {
		return nil, err
	}
	switch {
	case sc.VolumesURI == "":
		return nil, fmt.Errorf("%w: %s: storage %s (%s) has no Volumes collection: it builds no volumes", errclass.ErrUnsupported, c.addr, sc.ID, sc.Name)
	case len(sc.RAIDTypes) == 0:
		return nil, fmt.Errorf("%w: %s: storage %s (%s) lists no SupportedRAIDTypes: it builds no RAID volumes", errclass.ErrUnsupported, c.addr, sc.ID, sc.Name)
	case !slices.Contains(sc.RAIDTypes, req.RAIDType):
		return nil, fmt.Errorf("%w: %s: storage %s (%s) builds %s, not %s", errclass.ErrFailed, c.addr, sc.ID, sc.Name, strings.Join(sc.RAIDTypes, ", "), req.RAIDType)
	}
	links := make([]map[string]string, 0, len(req.Drives))
	for _, ref := range req.Drives {
		i := slices.IndexFunc(sc.Drives, func(d Drive) bool { return sameRef(ref, d.ID, d.URI) })
		if i < 0 {
			ids := make([]string, 0, len(sc.Drives))
			for _, d := range sc.Drives {
				ids = append(ids, d.ID)
			}
			return nil, fmt.Errorf("%w: %s: storage %s has no drive %q; its drives are %s", errclass.ErrFailed, c.addr, sc.ID, ref, strings.Join(ids, ", "))
		}
		if len(sc.Drives[i].Volumes) > 0 {
			return nil, fmt.Errorf("%w: %s: drive %s already belongs to volume %s: delete it first", errclass.ErrFailed, c.addr, sc.Drives[i].ID, short(sc.Drives[i].Volumes[0]))
		}
		links = append(links, map[string]string{"@odata.id": sc.Drives[i].URI})
	}
	body := map[string]any{"RAIDType": req.RAIDType, "Links": map[string]any{"Drives": links}}
	if req.CapacityBytes > 0 {
		body["CapacityBytes"] = req.CapacityBytes
	}
	if req.Name != "" {
		body["Name"] = req.Name
	}
	op := &StorageOp{Method: "Create", Target: sc.URI, ApplyTime: opApplyTime(sc.ApplyTimes)}
	if op.ApplyTime != "" {
		body["@Redfish.OperationApplyTime"] = op.ApplyTime
	}
	target := sc.VolumesURI
	err = g.Do(ctx, host, "volume create", c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, "volume create", func(ctx context.Context, s *rfSession) error {
			resp, err := s.api.Post(target, body)
			if err != nil {
				return c.refused(err, req.RAIDType+" volume on "+sc.ID)
			}
			c.storageAnswer(op, resp)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if op.Done {
		op.Volume = op.Monitor
		op.Monitor = ""
	}
	c.learnTask(ctx, op)
	return op, nil
}

// opApplyTime is the @Redfish.OperationApplyTime to send: none where the
// collection lists no support, Immediate where offered, else the first
// value listed (OnReset: the caller resets the system).
func opApplyTime(support []string) string {
	switch {
	case len(support) == 0:
		return ""
	case slices.Contains(support, "Immediate"):
		return "Immediate"
	}
	return support[0]
}

// storageAnswer reads a storage mutation's answer into op: 202 (a task:
// Location is its monitor, the body may be the Task), 201 (Location is
// the resource made), 200/204 (done).
func (c *Conn) storageAnswer(op *StorageOp, resp *http.Response) {
	code := resp.StatusCode
	hdr, body := readAnswer(resp)
	loc := hdr.Get("Location")
	if code != http.StatusAccepted {
		op.Done = true
		op.Monitor = loc // the caller moves it where it belongs
		return
	}
	op.Monitor = loc
	var td rfTaskDoc
	if jsonRaw(body, &td) && td.TaskState != "" {
		op.Task = td.ODataID
	}
}

// learnTask reads op's monitor once for the Task resource behind it.
func (c *Conn) learnTask(ctx context.Context, op *StorageOp) {
	if op.Done || op.Task != "" || op.Monitor == "" {
		if op.Done && op.Method != "Create" {
			op.Monitor = ""
		}
		return
	}
	if st, err := c.Task(ctx, op.Monitor); err == nil && st.URI != "" {
		op.Task = st.URI
	}
}

// findVolume is the volume ref names.
func findVolume(ctrls []StorageController, ref string) (*StorageController, *Volume) {
	for i := range ctrls {
		for j := range ctrls[i].Volumes {
			if v := &ctrls[i].Volumes[j]; sameRef(ref, v.ID, v.URI) {
				return &ctrls[i], v
			}
		}
	}
	return nil, nil
}

// DeleteVolume: see DayTwo (204: done; 202: a task).
func (c *Conn) DeleteVolume(ctx context.Context, g *guard.Guard, host, volume string) (*StorageOp, error) {
	ctrls, err := c.Storage(ctx) // errclass.ErrUnsupported on a BMC that is not Redfish
	if err != nil {
		return nil, err
	}
	if named := refMatches(ctrls, volume); len(named) > 1 && !strings.HasPrefix(volume, "/") {
		return nil, fmt.Errorf("%w: %s: %q names %s: give the URI of the volume to delete", errclass.ErrFailed, c.addr, volume, strings.Join(named, " and "))
	}
	_, v := findVolume(ctrls, volume)
	if v == nil {
		return nil, fmt.Errorf("%w: %s: no volume %q on the system's storage", errclass.ErrFailed, c.addr, volume)
	}
	op := &StorageOp{Method: "Delete", Target: v.URI}
	target := v.URI
	err = g.Do(ctx, host, "volume delete", c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, "volume delete", func(ctx context.Context, s *rfSession) error {
			resp, err := s.api.Delete(target)
			if err != nil {
				return c.refused(err, "delete of volume "+v.ID)
			}
			c.storageAnswer(op, resp)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	c.learnTask(ctx, op)
	return op, nil
}

// Erase: see DayTwo. A drive: its #Drive.SecureErase, else
// #Volume.Initialize of the volume holding it; a volume: its
// #Volume.Initialize (Slow where offered: it writes the whole volume).
// Neither offered: errclass.ErrUnsupported naming the drive or volume.
func (c *Conn) Erase(ctx context.Context, g *guard.Guard, host, target string) (*StorageOp, error) {
	ctrls, err := c.Storage(ctx) // errclass.ErrUnsupported on a BMC that is not Redfish
	if err != nil {
		return nil, err
	}
	if named := refMatches(ctrls, target); len(named) > 1 {
		return nil, fmt.Errorf("%w: %s: %q names %s: give the URI of the one to erase", errclass.ErrFailed, c.addr, target, strings.Join(named, " and "))
	}
	var (
		op     *StorageOp
		vol    *Volume
		action string
	)
	for i := range ctrls {
		for _, d := range ctrls[i].Drives {
			if !sameRef(target, d.ID, d.URI) {
				continue
			}
			if d.SecureErase != "" {
				op, action = &StorageOp{Method: "Drive.SecureErase", Target: d.URI}, d.SecureErase
				break
			}
			for _, vu := range d.Volumes {
				if _, v := findVolume(ctrls, vu); v != nil && v.Initialize != "" {
					vol = v
					break
				}
			}
			if vol == nil {
				how := "belongs to no volume offering #Volume.Initialize"
				if len(d.Volumes) > 0 {
					how = "its volume " + short(d.Volumes[0]) + " offers no #Volume.Initialize"
				}
				return nil, fmt.Errorf("%w: %s: drive %s (%s) cannot be erased through this BMC: it offers no #Drive.SecureErase and %s", errclass.ErrUnsupported, c.addr, d.ID, short(d.URI), how)
			}
		}
	}
	if op == nil && vol == nil {
		_, vol = findVolume(ctrls, target)
		if vol == nil {
			return nil, fmt.Errorf("%w: %s: no drive or volume %q on the system's storage", errclass.ErrFailed, c.addr, target)
		}
		if vol.Initialize == "" {
			return nil, fmt.Errorf("%w: %s: volume %s (%s) offers no #Volume.Initialize: it cannot be erased through this BMC", errclass.ErrUnsupported, c.addr, vol.ID, short(vol.URI))
		}
	}
	body := map[string]any{}
	if op == nil {
		op, action = &StorageOp{Method: "Volume.Initialize", Target: vol.URI}, vol.Initialize
		switch {
		case slices.Contains(vol.InitializeTypes, "Slow"):
			op.InitializeType = "Slow"
		case len(vol.InitializeTypes) > 0:
			op.InitializeType = vol.InitializeTypes[0]
		}
		if op.InitializeType != "" {
			body["InitializeType"] = op.InitializeType
		}
	}
	err = g.Do(ctx, host, "erase", c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, "erase", func(ctx context.Context, s *rfSession) error {
			resp, err := s.api.Post(action, body)
			if err != nil {
				return c.refused(err, op.Method+" of "+short(op.Target))
			}
			c.storageAnswer(op, resp)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	c.learnTask(ctx, op)
	return op, nil
}

// refMatches are the drives and volumes ref names (more than one: an Id
// shared by a drive and a volume, or by drives of two controllers).
func refMatches(ctrls []StorageController, ref string) []string {
	var out []string
	for _, sc := range ctrls {
		for _, d := range sc.Drives {
			if sameRef(ref, d.ID, d.URI) {
				out = append(out, "drive "+short(d.URI))
			}
		}
		for _, v := range sc.Volumes {
			if sameRef(ref, v.ID, v.URI) {
				out = append(out, "volume "+short(v.URI))
			}
		}
	}
	return out
}
