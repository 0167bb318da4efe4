package bmcsim

import (
	"encoding/json"
	"strings"
)

// Helpers over a parsed fixture document: freezing what never changes,
// placeholders, and reading values the engine needs.

// freeze pre-marshals what never changes: the whole body of a static
// resource without placeholders, else every subtree without one (except a
// system's Boot, which is overlaid).
func (r *resource) freeze() {
	if r.kind == kindStatic && len(r.mirrors) == 0 && !hasTmpl(r.tree) {
		r.static, _ = json.Marshal(r.tree)
		return
	}
	for k, v := range r.tree {
		if k == "Boot" && r.kind == kindSystem {
			continue
		}
		switch v.(type) {
		case map[string]any, []any:
			if !hasTmpl(v) {
				b, _ := json.Marshal(v)
				r.tree[k] = json.RawMessage(b)
			}
		}
	}
}

// checkPlaceholders turns strings holding {{…}} into tmpl and checks every
// placeholder name.
func checkPlaceholders(x any) error {
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			if s, ok := v.(string); ok && strings.Contains(s, "{{") {
				if _, err := expand(s, &vars{}); err != nil {
					return err
				}
				t[k] = tmpl(s)
				continue
			}
			if err := checkPlaceholders(v); err != nil {
				return err
			}
		}
	case []any:
		for i, v := range t {
			if s, ok := v.(string); ok && strings.Contains(s, "{{") {
				if _, err := expand(s, &vars{}); err != nil {
					return err
				}
				t[i] = tmpl(s)
				continue
			}
			if err := checkPlaceholders(v); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasTmpl(x any) bool {
	switch t := x.(type) {
	case tmpl:
		return true
	case map[string]any:
		for _, v := range t {
			if hasTmpl(v) {
				return true
			}
		}
	case []any:
		for _, v := range t {
			if hasTmpl(v) {
				return true
			}
		}
	}
	return false
}

func odataID(x any) string {
	if m, ok := x.(map[string]any); ok {
		s, _ := m["@odata.id"].(string)
		return s
	}
	return ""
}

func strs(x any) []string {
	l, _ := x.([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func takesCD(m map[string]any) bool {
	for _, t := range strs(m["MediaTypes"]) {
		if t == "CD" || t == "DVD" {
			return true
		}
	}
	return false
}

func initialSystem(r *resource) sysState {
	st := sysState{boot: BootOverride{Target: "None", Enabled: "Disabled"}}
	if boot, ok := r.tree["Boot"].(map[string]any); ok {
		if s, ok := boot["BootSourceOverrideTarget"].(string); ok {
			st.boot.Target = s
		}
		if s, ok := boot["BootSourceOverrideEnabled"].(string); ok {
			st.boot.Enabled = s
		}
		if s, ok := boot["BootSourceOverrideMode"].(string); ok {
			st.boot.Mode = s
		}
	}
	return st
}

func initialMedia(r *resource) mediaState {
	var st mediaState
	st.image, _ = r.tree["Image"].(string)
	st.inserted, _ = r.tree["Inserted"].(bool)
	st.wp, _ = r.tree["WriteProtected"].(bool)
	st.proto, _ = r.tree["TransferProtocolType"].(string)
	st.method, _ = r.tree["TransferMethod"].(string)
	return st
}
