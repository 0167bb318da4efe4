package bmcsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// resetSystem is #ComputerSystem.Reset on the action's system; ResetType
// must be one of the action's AllowableValues.
func (s *Sim) resetSystem(w http.ResponseWriter, b *bmc, a action, body []byte) {
	var req struct{ ResetType string }
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
			return
		}
	}
	allowed := a.res.resetTypes
	if !contains(allowed, req.ResetType) {
		writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterNotSupported",
			"ResetType "+strconv.Quote(req.ResetType)+" is not one of "+strings.Join(allowed, ", "))
		return
	}
	j := a.res.idx
	typ := req.ResetType
	switch typ {
	case "On", "ForceOn", "ForceOff", "GracefulShutdown", "PushPowerButton", "ForceRestart", "GracefulRestart", "PowerCycle", "Nmi":
	default:
		writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterNotSupported", "ResetType "+strconv.Quote(typ)+" is not simulated")
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if (typ == "ForceRestart" || typ == "GracefulRestart") && !b.sys[j].power {
		writeError(w, http.StatusConflict, "Base.1.0.ActionNotSupported", typ+" needs the system on; it is off")
		return
	}
	b.mutations++
	w.WriteHeader(http.StatusNoContent)
	if d := b.knobs.powerDelay(); d > 0 && typ != "Nmi" {
		// Accepted now, applied later: the system reads its old state
		// until then.
		time.AfterFunc(d, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			s.applyReset(b, j, typ)
		})
		return
	}
	s.applyReset(b, j, typ)
}

// applyReset changes system j's power as a reset of type typ does. b.mu
// held.
func (s *Sim) applyReset(b *bmc, j int, typ string) {
	if typ != "Nmi" {
		b.brickIfFlashing(time.Now())
	}
	on := b.sys[j].power
	switch typ {
	case "On", "ForceOn":
		if !on {
			b.powerOn(j)
		}
	case "ForceOff":
		b.powerOff(j)
	case "GracefulShutdown":
		s.gracefulShutdown(b, j)
	case "PushPowerButton":
		if on {
			b.powerOff(j)
		} else {
			b.powerOn(j)
		}
	case "ForceRestart", "GracefulRestart", "PowerCycle":
		b.powerOn(j)
	}
}

// ifMatch checks If-Match against the current ETag (412 on a mismatch).
func ifMatch(w http.ResponseWriter, r *http.Request, cur, what string) bool {
	if im := r.Header.Get("If-Match"); im != "" && im != "*" && im != cur {
		writeError(w, http.StatusPreconditionFailed, "Base.1.0.PreconditionFailed",
			"If-Match "+im+" does not match the current ETag "+cur+"; GET the "+what+" again")
		return false
	}
	return true
}

// patchSystem: PATCH of a ComputerSystem's Boot.
func (s *Sim) patchSystem(w http.ResponseWriter, r *http.Request, b *bmc, res *resource, body []byte) {
	var req struct {
		Boot *struct {
			BootSourceOverrideTarget  *string
			BootSourceOverrideEnabled *string
			BootSourceOverrideMode    *string
			HttpBootUri               *string //nolint:revive // the Redfish property's name
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
		return
	}
	j := res.idx
	b.mu.Lock()
	defer b.mu.Unlock()
	if !ifMatch(w, r, etag(b.sys[j].gen), "system") {
		return
	}
	if req.Boot == nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.PropertyUnknown", "only Boot can be patched")
		return
	}
	nb := b.sys[j].boot
	if t := req.Boot.BootSourceOverrideTarget; t != nil {
		if !contains(res.bootTargets, *t) {
			writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList",
				"BootSourceOverrideTarget "+strconv.Quote(*t)+" is not one of "+strings.Join(res.bootTargets, ", "))
			return
		}
		nb.Target = *t
	}
	if e := req.Boot.BootSourceOverrideEnabled; e != nil {
		if *e != "Disabled" && *e != "Once" && *e != "Continuous" {
			writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList", "BootSourceOverrideEnabled must be Disabled, Once or Continuous")
			return
		}
		nb.Enabled = *e
	}
	if m := req.Boot.BootSourceOverrideMode; m != nil {
		if !contains(res.bootModes, *m) {
			writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList",
				"BootSourceOverrideMode "+strconv.Quote(*m)+" is not one of "+strings.Join(res.bootModes, ", "))
			return
		}
		nb.Mode = *m
	}
	if u := req.Boot.HttpBootUri; u != nil && !patchHTTPBootURI(w, b, res, *u, &nb) {
		return
	}
	b.sys[j].boot = nb
	b.sys[j].gen++
	b.mutations++
	w.Header().Set("ETag", etag(b.sys[j].gen))
	w.WriteHeader(http.StatusNoContent)
}

// mediaRequest is the body of InsertMedia and of a VirtualMedia PATCH.
type mediaRequest struct {
	Image                *string
	Inserted             *bool
	WriteProtected       *bool
	TransferProtocolType *string
	TransferMethod       *string
}

// insertMedia is #VirtualMedia.InsertMedia.
func (s *Sim) insertMedia(w http.ResponseWriter, b *bmc, res *resource, body []byte) {
	var req mediaRequest
	if err := json.Unmarshal(body, &req); err != nil || req.Image == nil || *req.Image == "" {
		writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterMissing", "InsertMedia needs {\"Image\": URL}")
		return
	}
	if b.prof.needsProto && (req.TransferProtocolType == nil || *req.TransferProtocolType == "") {
		// The message as bmcweb words it; Base.1.5 and RelatedProperties
		// are what sushy 4.3.3 looks for before it retries with the type.
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.5.ActionParameterMissing",
			"The action InsertMedia requires the parameter TransferProtocolType to be present in the request body.",
			"#/TransferProtocolType")
		return
	}
	k := res.idx
	b.mu.Lock()
	defer func() { s.fetchMedia(b, k) }() // after the unlock below
	defer b.mu.Unlock()
	if b.media[k].inserted {
		writeError(w, http.StatusConflict, "Base.1.0.ResourceInUse", "a medium is already inserted; eject it first")
		return
	}
	m := &b.media[k]
	m.read, m.readErr = 0, ""
	m.image = *req.Image
	m.inserted = req.Inserted == nil || *req.Inserted
	m.wp = req.WriteProtected == nil || *req.WriteProtected
	if req.TransferProtocolType != nil {
		m.proto = *req.TransferProtocolType
	}
	if req.TransferMethod != nil {
		m.method = *req.TransferMethod
	}
	m.gen++
	b.mutations++
	w.WriteHeader(http.StatusNoContent)
}

// patchMedia: PATCH of a VirtualMedia without actions (Image, Inserted,
// WriteProtected, TransferProtocolType, TransferMethod), as the older
// schema and DMTF's mockups have it. Image "" or null ejects.
func (s *Sim) patchMedia(w http.ResponseWriter, r *http.Request, b *bmc, res *resource, body []byte) {
	// A JSON null Image decodes as a nil pointer: tell it from absent.
	var raw map[string]json.RawMessage
	var req mediaRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
		return
	}
	for k := range raw {
		switch k {
		case "Image", "Inserted", "WriteProtected", "TransferProtocolType", "TransferMethod":
		default:
			writeError(w, http.StatusBadRequest, "Base.1.0.PropertyNotWritable", "property "+k+" cannot be patched on "+res.path)
			return
		}
	}
	k := res.idx
	b.mu.Lock()
	defer func() { s.fetchMedia(b, k) }() // after the unlock below
	defer b.mu.Unlock()
	if !ifMatch(w, r, etag(b.media[k].gen), "virtual media") {
		return
	}
	m := &b.media[k]
	if _, ok := raw["Image"]; ok {
		m.read, m.readErr = 0, ""
		if req.Image == nil || *req.Image == "" {
			m.image, m.inserted = "", false
		} else {
			m.image, m.inserted = *req.Image, true
		}
	}
	if req.Inserted != nil {
		m.inserted = *req.Inserted
	}
	if req.WriteProtected != nil {
		m.wp = *req.WriteProtected
	}
	if req.TransferProtocolType != nil {
		m.proto = *req.TransferProtocolType
	}
	if req.TransferMethod != nil {
		m.method = *req.TransferMethod
	}
	if !m.inserted && m.image != "" {
		// Inserted false without an Image is an eject, as DMTF's mockup
		// server does it.
		if _, ok := raw["Image"]; !ok {
			m.image = ""
		}
	}
	m.gen++
	b.mutations++
	w.Header().Set("ETag", etag(m.gen))
	w.WriteHeader(http.StatusNoContent)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
