package bmcsim

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
)

// Firmware update (DMTF UpdateService v1_11, SoftwareInventory v1_4):
// #UpdateService.SimpleUpdate {ImageURI, TransferProtocol, Targets} or a
// multipart POST to MultipartHttpPushUri (parts UpdateParameters and
// UpdateFile) starts an update task (Knobs.UpdateMinutes). The new version
// is the image's file name without its extension ("…/bios-2.1.bin" →
// "bios-2.1"); the target is Targets[0], else the first Updateable member
// of FirmwareInventory. When the task completes the inventory item shows
// the new version, and so do the properties mirroring it (a system's
// BiosVersion, a manager's FirmwareVersion: the item's RelatedItem). One
// update at a time: another answers 409 Update.1.0.UpdateInProgress.

// FirmwareState is one firmware inventory item as /sim/state shows it.
type FirmwareState struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// simpleUpdate is #UpdateService.SimpleUpdate.
func (s *Sim) simpleUpdate(w http.ResponseWriter, b *bmc, a action, body []byte) {
	var req struct {
		ImageURI         string
		TransferProtocol string
		Targets          []string
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
		return
	}
	if req.ImageURI == "" {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing",
			"The action SimpleUpdate requires the parameter ImageURI to be present in the request body.", "#/ImageURI")
		return
	}
	u, err := url.Parse(req.ImageURI)
	if err != nil {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueFormatError",
			"ImageURI "+quote(req.ImageURI)+" is not a URI: "+err.Error(), "#/ImageURI")
		return
	}
	if u.Scheme == "" && req.TransferProtocol == "" {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing",
			"ImageURI has no scheme: give TransferProtocol too.", "#/TransferProtocol")
		return
	}
	if allowed := a.protocols; req.TransferProtocol != "" && len(allowed) > 0 && !slices.Contains(allowed, req.TransferProtocol) {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterNotSupported",
			"TransferProtocol "+quote(req.TransferProtocol)+" is not one of "+strings.Join(allowed, ", "), "#/TransferProtocol")
		return
	}
	s.startUpdate(w, b, req.Targets, u.Path)
}

// multipartUpdate is a POST to MultipartHttpPushUri.
func (s *Sim) multipartUpdate(w http.ResponseWriter, r *http.Request, b *bmc, body []byte) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		writeError(w, http.StatusUnsupportedMediaType, "Base.1.8.UnsupportedMediaType",
			"POST "+b.prof.multipartPush+" takes multipart/form-data with parts UpdateParameters and UpdateFile")
		return
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var targets []string
	file := ""
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "multipart body: "+err.Error()+" (at most 1 MiB is read)")
			return
		}
		data, _ := io.ReadAll(part)
		switch part.FormName() {
		case "UpdateParameters":
			var p struct{ Targets []string }
			if err := json.Unmarshal(data, &p); err != nil {
				writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "UpdateParameters: "+err.Error())
				return
			}
			targets = p.Targets
		case "UpdateFile":
			file = part.FileName()
			if file == "" {
				file = "image"
			}
		}
	}
	if file == "" {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterMissing", "the multipart body has no UpdateFile part", "#/UpdateFile")
		return
	}
	s.startUpdate(w, b, targets, file)
}

// startUpdate starts an update of targets (or the default item) to the
// version named by image.
func (s *Sim) startUpdate(w http.ResponseWriter, b *bmc, targets []string, image string) {
	version := strings.TrimSuffix(path.Base(image), path.Ext(image))
	if version == "" || version == "." || version == "/" {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueFormatError",
			"the image has no file name to take the new version from", "#/ImageURI")
		return
	}
	p := b.prof
	fw := -1
	if len(targets) > 1 {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterNotSupported", "one target per update", "#/Targets")
		return
	}
	if len(targets) == 1 {
		for i, r := range p.firmware {
			if r.path == strings.TrimSuffix(targets[0], "/") && r.d2.updateable {
				fw = i
			}
		}
		if fw < 0 {
			writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.ActionParameterNotSupported",
				"Targets[0] "+quote(targets[0])+" is not an Updateable member of the firmware inventory", "#/Targets/0")
			return
		}
	} else {
		for i, r := range p.firmware {
			if r.d2.updateable {
				fw = i
				break
			}
		}
		if fw < 0 {
			writeError(w, http.StatusBadRequest, "Base.1.8.ActionParameterNotSupported", "no Updateable item in the firmware inventory")
			return
		}
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	if t := b.runningUpdate(); t != nil {
		writeError(w, http.StatusConflict, "Update.1.0.UpdateInProgress",
			"An update is in progress: task "+t.id+" ("+b.monitorPath(t)+"); wait for it to end")
		return
	}
	target := p.firmware[fw]
	t := s.newTask(b, TaskUpdate, "Update "+target.d2.name, target.path, b.knobs.UpdateMinutes, -1, now)
	t.version = version
	t.finish = func(time.Time) {
		if b.fw == nil {
			b.fw = make([]string, len(p.firmware))
		}
		b.fw[fw] = version
	}
	b.mutations++
	b.accepted(w, t)
}

// fwVersion is firmware item i's version now. b.mu held.
func (b *bmc) fwVersion(i int) string {
	if b.fw != nil && b.fw[i] != "" {
		return b.fw[i]
	}
	v, _ := b.prof.firmware[i].tree["Version"].(string)
	return v
}

// overlayFirmware writes item r's version and status into d. b.mu held.
func (b *bmc) overlayFirmware(r *resource, d doc) {
	if r.idx < 0 || r.d2 == nil {
		return
	}
	d["Version"] = b.fwVersion(r.idx)
	for _, t := range b.tasks {
		if t.kind != TaskUpdate || t.target != r.path {
			continue
		}
		switch {
		case t.running():
			d["Status"] = doc{"State": "Updating", "Health": "OK"}
		case t.state == "Exception" && b.bricked:
			d["Status"] = doc{"State": "UnavailableOffline", "Health": "Critical"}
		}
	}
}

// firmwareStates is /sim/state's view. b.mu held.
func (b *bmc) firmwareStates() []FirmwareState {
	out := make([]FirmwareState, 0, len(b.prof.firmware))
	for i, r := range b.prof.firmware {
		out = append(out, FirmwareState{Path: r.path, Name: r.d2.name, Version: b.fwVersion(i)})
	}
	return out
}

// brickIfFlashing is called on a power change of a system: with
// Knobs.BrickOnPowerChange a running update dies and the board is
// bricked. b.mu held.
func (b *bmc) brickIfFlashing(now time.Time) {
	t := b.runningUpdate()
	if t == nil || !b.knobs.BrickOnPowerChange {
		return
	}
	b.abortTask(t, now, "Update.1.0.ApplyFailed", "Installation of '"+t.version+"' to '"+t.target+"' failed: power was lost during the flash; the board does not start")
	b.bricked = true
	for j := range b.sys {
		b.sys[j].power = false
		b.sys[j].gen++
	}
}
