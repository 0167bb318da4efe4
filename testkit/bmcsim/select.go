package bmcsim

import (
	"net/http"
	"net/url"
	"strings"
)

// The $select query (DSP0266 "Query parameters"), served where the
// profile's service root advertises ProtocolFeaturesSupported.SelectQuery:
// the answer holds the properties named (comma-separated; "A/B" keeps B of
// the object A) and the @odata annotations; a property the resource lacks
// is left out. A profile advertising no $select answers it 501, as the
// spec asks of a service that does not support a query parameter starting
// with "$". With $expand too, the document is expanded first and then
// selected.

// parseSelectSupport reads ProtocolFeaturesSupported.SelectQuery of the
// service root (before freeze).
func parseSelectSupport(root map[string]any) bool {
	pf, _ := root["ProtocolFeaturesSupported"].(map[string]any)
	ok, _ := pf["SelectQuery"].(bool)
	return ok
}

// getQuery answers a GET carrying $expand and/or $select.
func (s *Sim) getQuery(w http.ResponseWriter, b *bmc, pth string, q url.Values) {
	if q.Has("$select") && !b.prof.selects {
		writeError(w, http.StatusNotImplemented, "Base.1.0.QueryNotSupported", "$select is not supported by this service")
		return
	}
	if !q.Has("$expand") {
		d, tag, ok := s.render(b, pth)
		if !ok {
			writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no resource at "+pth)
			return
		}
		writeJSON(w, http.StatusOK, selectProps(d, q.Get("$select")), tag)
		return
	}
	s.getExpanded(w, b, pth, q)
}

// selectProps is d with only the properties sel names ("" : all of d).
func selectProps(d map[string]any, sel string) map[string]any {
	if sel == "" {
		return d
	}
	out := map[string]any{}
	for k, v := range d {
		if strings.HasPrefix(k, "@odata.") {
			out[k] = v
		}
	}
	for _, p := range strings.Split(sel, ",") {
		top, sub, nested := strings.Cut(strings.TrimSpace(p), "/")
		v, ok := d[top]
		if !ok {
			continue
		}
		if !nested {
			out[top] = v
			continue
		}
		m, _ := v.(map[string]any)
		if sv, ok := m[sub]; ok {
			o, _ := out[top].(map[string]any)
			if o == nil {
				o = map[string]any{}
				out[top] = o
			}
			o[sub] = sv
		}
	}
	return out
}
