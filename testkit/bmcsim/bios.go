package bmcsim

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// BIOS settings (DMTF Bios v1_2, Settings v1_3, AttributeRegistry v1_3):
// Bios shows the current Attributes and @Redfish.Settings, whose
// SettingsObject (Bios/Settings) is PATCHed with {"Attributes": {…}} and
// optionally @Redfish.SettingsApplyTime. Pending values apply at the
// system's next power-on; each is checked against the attribute registry
// (and Knobs.BiosRejects), and the outcome is @Redfish.Settings.Messages
// (one per attribute that did not take, RelatedProperties
// "#/Attributes/NAME"; Base.1.8.Success when all did) with Time.

// BiosState is one Bios resource as /sim/state shows it.
type BiosState struct {
	Path       string         `json:"path"`
	Attributes map[string]any `json:"attributes"`
	Pending    map[string]any `json:"pending,omitempty"`
	// Messages are the MessageIds of the last apply.
	Messages []string `json:"messages,omitempty"`
}

type biosState struct {
	cur, pending map[string]any
	applyTime    string // as PATCHed ("" none)
	messages     []doc
	applied      time.Time
	gen          uint64
}

// biosAt is BIOS k's state, allocating the BMC's on first use. b.mu held.
func (b *bmc) biosAt(k int) *biosState {
	if b.bios == nil {
		b.bios = make([]biosState, len(b.prof.bios))
	}
	return &b.bios[k]
}

// check is why attribute name cannot take value v ("" when it can): a
// Base message id and text.
func checkAttr(reg map[string]attrDef, name string, v any) (string, string) {
	if reg == nil {
		return "", ""
	}
	d, ok := reg[name]
	switch {
	case !ok:
		return "Base.1.8.PropertyUnknown", fmt.Sprintf("The property %s is not in the list of valid properties for the resource.", name)
	case d.readOnly:
		return "Base.1.8.PropertyNotWritable", fmt.Sprintf("The property %s is a read only property and cannot be assigned a value.", name)
	}
	typeErr := func() (string, string) {
		return "Base.1.8.PropertyValueTypeError", fmt.Sprintf("The value %v for the property %s is of a different type than the property can accept (%s).", jsonText(v), name, d.typ)
	}
	switch d.typ {
	case "Enumeration":
		s, ok := v.(string)
		if !ok {
			return typeErr()
		}
		if !slices.Contains(d.values, s) {
			return "Base.1.8.PropertyValueNotInList", fmt.Sprintf("The value %s for the property %s is not in the list of acceptable values.", jsonText(v), name)
		}
	case "String", "Password":
		s, ok := v.(string)
		if !ok {
			return typeErr()
		}
		if d.minLen != nil && int64(len(s)) < *d.minLen || d.maxLen != nil && int64(len(s)) > *d.maxLen {
			return "Base.1.8.PropertyValueFormatError", fmt.Sprintf("The value %s for the property %s is of a different format than the property can accept (length %d).", jsonText(v), name, len(s))
		}
	case "Integer":
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			return typeErr()
		}
		if d.lower != nil && int64(f) < *d.lower || d.upper != nil && int64(f) > *d.upper {
			return "Base.1.12.PropertyValueOutOfRange", fmt.Sprintf("The value %v for the property %s is not in the supported range of acceptable values.", f, name)
		}
	case "Boolean":
		if _, ok := v.(bool); !ok {
			return typeErr()
		}
	}
	return "", ""
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// attrMessage is a message about attribute name holding value v; its
// MessageArgs follow the Base registry (value then name where the message
// names a value).
func attrMessage(id, msg, name string, v any) doc {
	args := []string{name}
	switch id[strings.LastIndex(id, ".")+1:] {
	case "PropertyValueNotInList", "PropertyValueTypeError", "PropertyValueOutOfRange", "PropertyValueFormatError":
		args = []string{jsonText(v), name}
	}
	return doc{"MessageId": id, "Message": msg, "MessageArgs": args, "RelatedProperties": []string{"#/Attributes/" + name},
		"Severity": "Warning", "MessageSeverity": "Warning"}
}

// patchBios is a PATCH of a Bios settings object.
func (s *Sim) patchBios(w http.ResponseWriter, b *bmc, res *resource, body []byte) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", err.Error())
		return
	}
	var attrs map[string]any
	if err := json.Unmarshal(req["Attributes"], &attrs); err != nil || attrs == nil {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyMissing", "PATCH "+res.path+` needs {"Attributes": {NAME: VALUE, …}}`, "#/Attributes")
		return
	}
	var at struct{ ApplyTime string }
	if raw, ok := req["@Redfish.SettingsApplyTime"]; ok {
		if err := json.Unmarshal(raw, &at); err != nil || at.ApplyTime == "" {
			writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyValueFormatError", `@Redfish.SettingsApplyTime must be {"ApplyTime": …}`, "#/@Redfish.SettingsApplyTime")
			return
		}
	}
	for k := range req {
		if k != "Attributes" && k != "@Redfish.SettingsApplyTime" {
			writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyUnknown", "property "+k+" cannot be patched on "+res.path+": send Attributes", "#/"+k)
			return
		}
	}
	bios := b.prof.bios[res.idx]
	if times := bios.d2.applyTimes; at.ApplyTime != "" && !slices.Contains(times, at.ApplyTime) {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList",
			fmt.Sprintf("ApplyTime %q is not one of %v (SupportedApplyTimes of %s)", at.ApplyTime, times, bios.path), "#/@Redfish.SettingsApplyTime/ApplyTime")
		return
	}
	if b.prof.biosValidate {
		var infos []doc
		for _, k := range sortedKeys(attrs) {
			if id, msg := checkAttr(bios.d2.registry, k, attrs[k]); id != "" {
				infos = append(infos, attrMessage(id, msg, k, attrs[k]))
			}
		}
		if len(infos) > 0 {
			writeJSON(w, http.StatusBadRequest, doc{"error": doc{"code": infos[0]["MessageId"], "message": infos[0]["Message"], "@Message.ExtendedInfo": infos}}, "")
			return
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.biosAt(res.idx)
	if st.pending == nil {
		st.pending = map[string]any{}
	}
	maps.Copy(st.pending, attrs)
	if at.ApplyTime != "" {
		st.applyTime = at.ApplyTime
	}
	b.mutations++
	if at.ApplyTime == "Immediate" {
		b.applyBiosAt(res.idx, time.Now())
	}
	w.WriteHeader(http.StatusNoContent)
}

// applyBios applies system j's pending BIOS settings (at its power-on).
// b.mu held.
func (b *bmc) applyBios(j int, now time.Time) {
	if k := b.prof.sysBios[j]; k >= 0 && b.bios != nil {
		b.applyBiosAt(k, now)
	}
}

func (b *bmc) applyBiosAt(k int, now time.Time) {
	st := b.biosAt(k)
	if len(st.pending) == 0 || b.prof.biosNeedsApplyTime && st.applyTime == "" {
		return // iDRAC: staged values without a job stay pending
	}
	reg := b.prof.bios[k].d2.registry
	st.messages = nil
	if st.cur == nil {
		st.cur = map[string]any{}
	}
	for _, name := range sortedKeys(st.pending) {
		v := st.pending[name]
		id, msg := checkAttr(reg, name, v)
		if id == "" && slices.Contains(b.knobs.BiosRejects, name) {
			id, msg = "Base.1.12.PropertyNotUpdated", fmt.Sprintf("The property %s was not updated due to an internal service error.", name)
		}
		if id != "" {
			st.messages = append(st.messages, attrMessage(id, msg, name, v))
			continue
		}
		st.cur[name] = v
	}
	if len(st.messages) == 0 {
		st.messages = []doc{{"MessageId": "Base.1.8.Success", "Message": "Successfully Completed Request", "Severity": "OK", "MessageSeverity": "OK"}}
	}
	st.pending, st.applyTime, st.applied = nil, "", now
	st.gen++
}

// overlayBios writes BIOS k's state into d (the Bios resource). b.mu held.
func (b *bmc) overlayBios(r *resource, d doc) {
	attrs := make(map[string]any, len(r.d2.attrs))
	for k, v := range r.d2.attrs {
		attrs[k] = b.vars.copyValue(v)
	}
	var st *biosState
	if b.bios != nil && r.idx >= 0 && r.d2.settings != "" {
		st = &b.bios[r.idx]
		maps.Copy(attrs, st.cur)
	}
	for k := range attrs {
		if def, ok := r.d2.registry[k]; ok && def.typ == "Password" {
			attrs[k] = nil // never shown
		}
	}
	d["Attributes"] = attrs
	if r.d2.settings == "" {
		return
	}
	set := doc{"@odata.type": "#Settings.v1_3_5.Settings", "SettingsObject": doc{"@odata.id": r.d2.settings}}
	if len(r.d2.applyTimes) > 0 {
		set["SupportedApplyTimes"] = r.d2.applyTimes
	}
	if st != nil && !st.applied.IsZero() {
		set["Messages"] = st.messages
		set["Time"] = rfc3339(st.applied)
		set["ETag"] = etag(st.gen)
	}
	d["@Redfish.Settings"] = set
}

// overlayBiosSettings writes the pending values into d (the settings
// object). b.mu held.
func (b *bmc) overlayBiosSettings(r *resource, d doc) {
	attrs := map[string]any{}
	if b.bios != nil {
		st := &b.bios[r.idx]
		maps.Copy(attrs, st.pending)
		if st.applyTime != "" {
			d["@Redfish.SettingsApplyTime"] = doc{"@odata.type": "#Settings.v1_3_5.PreferredApplyTime", "ApplyTime": st.applyTime}
		}
	}
	d["Attributes"] = attrs
}

// biosStates is /sim/state's view. b.mu held.
func (b *bmc) biosStates() []BiosState {
	out := make([]BiosState, 0, len(b.prof.bios))
	for k, r := range b.prof.bios {
		d := doc{}
		b.overlayBios(r, d)
		bs := BiosState{Path: r.path, Attributes: d["Attributes"].(map[string]any)}
		if b.bios != nil {
			bs.Pending = maps.Clone(b.bios[k].pending)
			for _, m := range b.bios[k].messages {
				bs.Messages = append(bs.Messages, m["MessageId"].(string))
			}
		}
		out = append(out, bs)
	}
	return out
}
