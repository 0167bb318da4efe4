package bmcsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The $expand query (Redfish spec DSP0266 "Query parameters"), served as
// the profile's service root advertises it in
// ProtocolFeaturesSupported.ExpandQuery: "." (subordinate resources, not
// the Links section) when NoLinks, "*" (Links too) when ExpandAll, with
// ($levels=N) up to MaxLevels when Levels. A profile advertising nothing
// answers any $expand 501 Not Implemented, as the spec asks of a service
// that does not support a query parameter starting with "$".

// expandSupport is what the service root advertises.
type expandSupport struct {
	all, noLinks, levels bool
	max                  int
}

func (e expandSupport) any() bool { return e.all || e.noLinks }

// parseExpandSupport reads ProtocolFeaturesSupported.ExpandQuery of the
// service root (before freeze).
func parseExpandSupport(root map[string]any) expandSupport {
	pf, _ := root["ProtocolFeaturesSupported"].(map[string]any)
	eq, _ := pf["ExpandQuery"].(map[string]any)
	var e expandSupport
	e.all, _ = eq["ExpandAll"].(bool)
	e.noLinks, _ = eq["NoLinks"].(bool)
	e.levels, _ = eq["Levels"].(bool)
	if m, ok := eq["MaxLevels"].(json.Number); ok { // fixtures are read with UseNumber
		n, _ := m.Int64()
		e.max = int(n)
	}
	if !e.levels || e.max < 1 {
		e.max = 1
	}
	return e
}

// parseExpand reads $expand's value: "." or "*", optionally with
// ($levels=N). An error names what the profile accepts.
func (e expandSupport) parse(v string) (links bool, levels int, err error) {
	kind, rest, _ := strings.Cut(v, "(")
	switch {
	case kind == "." && e.noLinks:
	case kind == "*" && e.all:
		links = true
	default:
		return false, 0, fmt.Errorf("$expand=%s is not supported: this service supports %s", v, e.describe())
	}
	levels = 1
	if rest != "" {
		n, ok := strings.CutPrefix(strings.TrimSuffix(rest, ")"), "$levels=")
		l, perr := strconv.Atoi(n)
		if !ok || perr != nil || !e.levels || l < 1 || l > e.max {
			return false, 0, fmt.Errorf("$expand=%s: $levels must be 1 to %d on this service", v, e.max)
		}
		levels = l
	}
	return links, levels, nil
}

func (e expandSupport) describe() string {
	var kinds []string
	if e.noLinks {
		kinds = append(kinds, `"."`)
	}
	if e.all {
		kinds = append(kinds, `"*"`)
	}
	s := strings.Join(kinds, " and ")
	if e.levels {
		s += " with ($levels=1…" + strconv.Itoa(e.max) + ")"
	}
	return s
}

// getExpanded answers GET pth?$expand=v: the document with the links it
// holds (outside Links unless "*") replaced by the documents they name,
// levels deep. A link to nothing stays a link.
func (s *Sim) getExpanded(w http.ResponseWriter, b *bmc, pth string, q url.Values) {
	e := b.prof.expand
	if !e.any() {
		writeError(w, http.StatusNotImplemented, "Base.1.0.QueryNotSupported", "$expand is not supported by this service")
		return
	}
	links, levels, err := e.parse(q.Get("$expand"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.QueryParameterValueFormatError", err.Error())
		return
	}
	d, tag, ok := s.render(b, pth)
	if !ok {
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no resource at "+pth)
		return
	}
	s.expandIn(b, d, links, levels)
	writeJSON(w, http.StatusOK, selectProps(d, q.Get("$select")), tag)
}

// render is the document at pth as a GET answers it, decoded, and its
// ETag: the caller's own copy (expandIn and selectProps change it). A
// static resource is decoded once and copied; any other is built, encoded
// and decoded again, so what the overlay put in it becomes plain JSON
// values.
func (s *Sim) render(b *bmc, pth string) (map[string]any, string, bool) {
	r := b.prof.res[pth]
	if r == nil {
		return nil, "", false
	}
	if r.static != nil {
		t := r.staticTree()
		if t == nil {
			return nil, "", false
		}
		return copyDoc(t).(map[string]any), "", true
	}
	d := b.vars.copyMap(r.tree)
	b.mu.Lock()
	tag := b.overlay(r, d)
	b.mu.Unlock()
	raw, _ := json.Marshal(d)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", false
	}
	return m, tag, true
}

// staticTree is r.static decoded, once (nil if it does not decode). The
// tree is shared: read it, or copy it with copyDoc.
func (r *resource) staticTree() map[string]any {
	r.staticOnce.Do(func() {
		var m map[string]any
		if json.Unmarshal(r.static, &m) == nil {
			r.staticDoc = m
		}
	})
	return r.staticDoc
}

// copyDoc is a deep copy of a decoded JSON value (maps and slices copied,
// the rest shared: strings, numbers, booleans and nil do not change).
func copyDoc(x any) any {
	switch t := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			out[k] = copyDoc(v)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			out[i] = copyDoc(v)
		}
		return out
	}
	return x
}

// expandIn replaces, in x, every link ({"@odata.id": …} alone) by its
// document, expanded levels-1 further; the Links section only with links.
func (s *Sim) expandIn(b *bmc, x any, links bool, levels int) any {
	switch t := x.(type) {
	case map[string]any:
		if id, ok := t["@odata.id"].(string); ok && len(t) == 1 {
			if levels < 1 {
				return t
			}
			d, _, ok := s.render(b, strings.TrimSuffix(id, "/"))
			if !ok {
				return t
			}
			s.expandIn(b, d, links, levels-1)
			return d
		}
		for k, v := range t {
			if k == "Links" && !links {
				continue
			}
			t[k] = s.expandIn(b, v, links, levels)
		}
	case []any:
		for i, v := range t {
			t[i] = s.expandIn(b, v, links, levels)
		}
	}
	return x
}
