package bmcsim

import (
	"encoding/json"
	"net/http"
	"path"
	"strings"
)

// The generic engine: a GET serves the profile's document (copied, with
// the BMC's placeholders substituted and its state overlaid by resource
// type); mutations are dispatched by action name (POST to an Actions
// target) or by the target's @odata.type (PATCH). Nothing here names a
// path of a particular profile.

type doc = map[string]any

const v1 = "/redfish/v1"

// get answers a GET of path. b.mu is taken here.
func (s *Sim) get(w http.ResponseWriter, b *bmc, pth string) {
	p := b.prof
	r := p.res[pth]
	if r == nil {
		if p.sessions != "" && strings.HasPrefix(pth, p.sessions+"/") {
			s.getSession(w, b, pth)
			return
		}
		if s.getDynamic(w, b, pth) {
			return
		}
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no resource at "+pth)
		return
	}
	w.Header().Set("Allow", r.allow)
	if r.static != nil {
		if pth == v1 {
			r.rootOnce.Do(func() { r.rootBody = rootWithEvents(p, rootWithAccounts(r.static)) })
			writeBytes(w, http.StatusOK, r.rootBody, "")
			return
		}
		writeBytes(w, http.StatusOK, r.static, "")
		return
	}
	d := b.vars.copyMap(r.tree)
	if pth == v1 {
		d["AccountService"] = doc{"@odata.id": accountService}
		if p.events().push {
			d["EventService"] = doc{"@odata.id": eventService}
		}
	}
	b.mu.Lock()
	tag := b.overlay(r, d)
	b.mu.Unlock()
	writeJSON(w, http.StatusOK, d, tag)
}

// overlay writes b's state into d, a copy of r's document, and returns the
// ETag to send ("" for none). b.mu held.
func (b *bmc) overlay(r *resource, d doc) string {
	defer b.overlayHealth(r, d)
	switch r.kind {
	case kindSystem:
		st := b.sys[r.idx]
		b.overlayDayTwo(r, d)
		if b.prof.noPower {
			delete(d, "PowerState")
		} else {
			d["PowerState"] = onOff(st.power)
		}
		if boot, ok := d["Boot"].(map[string]any); ok {
			boot["BootSourceOverrideTarget"] = st.boot.Target
			boot["BootSourceOverrideEnabled"] = st.boot.Enabled
			if _, ok := boot["BootSourceOverrideMode"]; ok || st.boot.Mode != "" {
				boot["BootSourceOverrideMode"] = st.boot.Mode
			}
			if r.httpBootURI {
				boot["HttpBootUri"] = nullable(st.boot.HTTPBootURI)
			}
		}
		return b.withETag(d, st.gen)
	case kindChassis:
		if r.idx >= 0 && r.has["PowerState"] {
			d["PowerState"] = onOff(b.sys[r.idx].power)
		}
	case kindMedia:
		st := b.media[r.idx]
		d["Image"] = nullable(st.image)
		d["Inserted"] = st.inserted
		if r.has["ImageName"] {
			d["ImageName"] = nil
			if st.image != "" {
				d["ImageName"] = path.Base(st.image)
			}
		}
		if r.has["WriteProtected"] {
			d["WriteProtected"] = st.wp
		}
		if r.has["ConnectedVia"] {
			d["ConnectedVia"] = connectedVia(st.inserted)
		}
		if r.has["TransferProtocolType"] {
			d["TransferProtocolType"] = nullable(st.proto)
		}
		if r.has["TransferMethod"] {
			d["TransferMethod"] = nullable(st.method)
		}
		return b.withETag(d, st.gen)
	case kindSessions:
		members := make([]doc, 0, len(b.sessions))
		for _, x := range b.sessions {
			members = append(members, doc{"@odata.id": b.prof.sessions + "/" + x.id})
		}
		d["Members"] = members
		d["Members@odata.count"] = len(members)
	default:
		b.overlayDayTwo(r, d)
	}
	return ""
}

func (b *bmc) withETag(d doc, gen uint64) string {
	t := etag(gen)
	if b.prof.odataETag {
		d["@odata.etag"] = t
	}
	return t
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func connectedVia(inserted bool) string {
	if inserted {
		return "URI"
	}
	return "NotConnected"
}

func (s *Sim) getSession(w http.ResponseWriter, b *bmc, pth string) {
	id := strings.TrimPrefix(pth, b.prof.sessions+"/")
	b.mu.Lock()
	found, user := false, ""
	for _, x := range b.sessions {
		if x.id == id {
			found, user = true, x.user
		}
	}
	b.mu.Unlock()
	if !found {
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no resource at "+pth)
		return
	}
	writeJSON(w, http.StatusOK, doc{"@odata.id": pth, "@odata.type": "#Session.v1_0_0.Session", "Id": id, "Name": "User Session", "UserName": user}, "")
}

// copyMap copies a document, substituting placeholders; frozen subtrees
// (json.RawMessage) are shared.
func (v *vars) copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, x := range m {
		out[k] = v.copyValue(x)
	}
	return out
}

func (v *vars) copyValue(x any) any {
	switch t := x.(type) {
	case map[string]any:
		return v.copyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = v.copyValue(e)
		}
		return out
	case tmpl:
		return v.mustExpand(string(t))
	}
	return x
}

// mutate dispatches a POST, PATCH or DELETE.
func (s *Sim) mutate(w http.ResponseWriter, r *http.Request, b *bmc, pth string, body []byte) {
	p := b.prof
	if s.mutateDayTwo(w, r, b, pth, body) {
		return
	}
	switch r.Method {
	case http.MethodDelete:
		if p.sessions != "" && strings.HasPrefix(pth, p.sessions+"/") {
			b.mu.Lock()
			ok := b.dropSession(strings.TrimPrefix(pth, p.sessions+"/"))
			b.mu.Unlock()
			if !ok {
				writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no session at "+pth)
				return
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
	case http.MethodPost:
		if a, ok := p.actions[pth]; ok {
			s.doAction(w, b, a, body)
			return
		}
	case http.MethodPatch:
		if res := p.res[pth]; res != nil {
			switch res.kind {
			case kindSystem:
				s.patchSystem(w, r, b, res, body)
				return
			case kindMedia:
				if res.hasInsert {
					writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed",
						"PATCH is not allowed on "+pth+": use its #VirtualMedia.InsertMedia and #VirtualMedia.EjectMedia actions")
					return
				}
				s.patchMedia(w, r, b, res, body)
				return
			}
		}
	}
	if p.res[pth] == nil && !strings.Contains(pth, "/Actions/") {
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no resource at "+pth)
		return
	}
	writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", r.Method+" is not allowed on "+pth)
}

func (s *Sim) doAction(w http.ResponseWriter, b *bmc, a action, body []byte) {
	switch a.name {
	case "#ComputerSystem.Reset":
		s.resetSystem(w, b, a, body)
	case "#Manager.Reset":
		var req struct{ ResetType string }
		_ = json.Unmarshal(body, &req)
		if req.ResetType != "" && len(a.allowed) > 0 && !contains(a.allowed, req.ResetType) {
			writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterNotSupported",
				"ResetType "+quote(req.ResetType)+" is not one of "+strings.Join(a.allowed, ", "))
			return
		}
		b.mu.Lock()
		b.resets++
		b.mutations++
		b.sessions = nil // a BMC reboot ends every session
		b.forgetSubscriptions()
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case "#VirtualMedia.InsertMedia":
		s.insertMedia(w, b, a.res, body)
	case "#UpdateService.SimpleUpdate":
		s.simpleUpdate(w, b, a, body)
	case "#Drive.SecureErase":
		s.secureErase(w, b, a.res)
	case "#VirtualMedia.EjectMedia":
		b.mu.Lock()
		defer b.mu.Unlock()
		b.ejectMedia(a.res.idx)
		b.mutations++
		w.WriteHeader(http.StatusNoContent)
	default:
		writeError(w, http.StatusMethodNotAllowed, "Base.1.0.ActionNotSupported", a.name+" is not simulated")
	}
}

// ejectMedia empties device k, back to the fixture's state. b.mu held.
func (b *bmc) ejectMedia(k int) {
	gen := b.media[k].gen
	b.media[k] = b.prof.initMed[k]
	b.media[k].image, b.media[k].inserted = "", false
	b.media[k].gen = gen + 1
}

func quote(s string) string { return `"` + s + `"` }
