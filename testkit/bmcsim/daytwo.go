package bmcsim

import (
	"net/http"
	"strings"
)

// Routing of the day-two resources (DESIGN.md, "Day two"): overlays of
// the fixture's documents, the documents that exist only in state
// (tasks, volumes) and the mutations.

// overlayDayTwo writes b's day-two state into d, r's copy. b.mu held.
func (b *bmc) overlayDayTwo(r *resource, d doc) {
	switch r.kind {
	case kindTasks:
		m := b.taskMembers()
		d["Members"], d["Members@odata.count"] = m, len(m)
	case kindFirmware:
		b.overlayFirmware(r, d)
	case kindBios:
		if r.d2 != nil {
			b.overlayBios(r, d)
		}
	case kindBiosSettings:
		b.overlayBiosSettings(r, d)
	case kindVolumes:
		if r.d2 != nil && r.d2.storage >= 0 {
			b.overlayVolumes(r, d)
		}
	case kindDrive:
		b.overlayDrive(r, d)
	}
	for _, m := range r.mirrors {
		d[m.field] = b.fwVersion(m.fw)
	}
	if r.kind == kindSystem && b.bricked {
		d["Status"] = doc{"State": "UnavailableOffline", "Health": "Critical"}
	}
}

// getDynamic answers a GET of a document that exists only in state (a
// volume); false when there is none at pth.
func (s *Sim) getDynamic(w http.ResponseWriter, b *bmc, pth string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.volumeAt(pth)
	if v == nil {
		return false
	}
	w.Header().Set("Allow", "GET, HEAD, DELETE")
	writeJSON(w, http.StatusOK, b.volumeDoc(v, b.prof.res[b.prof.storage[v.storage].d2.volumes]), "")
	return true
}

// mutateDayTwo dispatches the day-two mutations; false when pth is not one.
func (s *Sim) mutateDayTwo(w http.ResponseWriter, r *http.Request, b *bmc, pth string, body []byte) bool {
	p := b.prof
	res := p.res[pth]
	switch r.Method {
	case http.MethodPatch:
		if res != nil && res.kind == kindBiosSettings {
			s.patchBios(w, b, res, body)
			return true
		}
	case http.MethodPost:
		switch {
		case res != nil && res.kind == kindVolumes && res.d2.storage >= 0:
			s.createVolume(w, b, res, body)
			return true
		case p.multipartPush != "" && pth == p.multipartPush:
			s.multipartUpdate(w, r, b, body)
			return true
		case strings.HasSuffix(pth, "/Actions/Volume.Initialize"):
			b.mu.Lock()
			defer b.mu.Unlock()
			v := b.volumeAt(strings.TrimSuffix(pth, "/Actions/Volume.Initialize"))
			if v == nil {
				return false
			}
			s.initializeVolume(w, b, v, body)
			return true
		}
	case http.MethodDelete:
		b.mu.Lock()
		defer b.mu.Unlock()
		v := b.volumeAt(pth)
		if v == nil {
			return false
		}
		s.deleteVolume(w, b, v, body)
		return true
	}
	return false
}

// dayTwoState fills st's day-two fields. b.mu held.
func (b *bmc) dayTwoState(st *State) {
	st.Tasks = b.taskStates()
	st.Firmware = b.firmwareStates()
	st.Bios = b.biosStates()
	b.storageStates(st)
	st.Bricked, st.SelfReboots, st.Rebooting, st.Knobs = b.bricked, b.selfReboots, b.rebooting, b.knobs
	if len(st.Tasks) == 0 {
		st.Tasks = nil
	}
}
