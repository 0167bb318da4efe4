package api

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// docPath is the generated API reference.
var docPath = filepath.Join("..", "..", "docs", "api.md")

// TestAPIDocUpToDate fails when docs/api.md is not what openapi.yaml
// renders to. RACKFENCE_UPDATE_DOCS=1 rewrites it.
func TestAPIDocUpToDate(t *testing.T) {
	want := renderAPIDoc(loadSpec(t))
	if os.Getenv("RACKFENCE_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("%v: generate it with RACKFENCE_UPDATE_DOCS=1 go test ./coordinator/api -run TestAPIDocUpToDate", err)
	}
	if string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("docs/api.md differs from coordinator/api/openapi.yaml at line %d:\n have: %s\n want: %s\nregenerate: RACKFENCE_UPDATE_DOCS=1 go test ./coordinator/api -run TestAPIDocUpToDate", i+1, g, w)
			}
		}
	}
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "\n", " "), "|", "\\|")
}

func anchor(s string) string { return strings.ToLower(s) }

// typeOf renders a schema in a few words, linking named schemas.
func typeOf(s map[string]any) string {
	if s == nil {
		return ""
	}
	if ref := str(s, "$ref"); ref != "" {
		n := ref[strings.LastIndex(ref, "/")+1:]
		return fmt.Sprintf("[%s](#%s)", n, anchor(n))
	}
	if c, ok := s["const"]; ok {
		return fmt.Sprintf("`%q`", c)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		var parts []string
		for _, a := range alts {
			parts = append(parts, typeOf(a.(map[string]any)))
		}
		return strings.Join(parts, " or ")
	}
	if e, ok := s["enum"].([]any); ok {
		var parts []string
		for _, v := range e {
			parts = append(parts, fmt.Sprintf("`%v`", v))
		}
		return "one of " + strings.Join(parts, ", ")
	}
	var t string
	switch v := s["type"].(type) {
	case string:
		t = v
	case []any:
		var parts []string
		for _, p := range v {
			parts = append(parts, fmt.Sprint(p))
		}
		t = strings.Join(parts, " or ")
	}
	if strings.HasPrefix(t, "array") {
		t = strings.Replace(t, "array", "array of "+typeOf(obj(s, "items")), 1)
	}
	if t == "object" {
		if ap := obj(s, "additionalProperties"); ap != nil {
			t = "map of " + typeOf(ap)
		}
	}
	if f := str(s, "format"); f != "" {
		t += " (" + f + ")"
	}
	if p := str(s, "pattern"); p != "" {
		t += fmt.Sprintf(", pattern `%s`", p)
	}
	return t
}

// renderAPIDoc renders the reference from the document.
func renderAPIDoc(sp *spec) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	info := obj(sp.doc, "info")
	p("# %s reference\n\n", str(info, "title"))
	p("<!-- Generated from coordinator/api/openapi.yaml by TestAPIDocUpToDate; edit the YAML, then run\n")
	p("     RACKFENCE_UPDATE_DOCS=1 go test ./coordinator/api -run TestAPIDocUpToDate -->\n\n")
	p("The machine-readable form is served by every coordinator at `GET /v1/openapi.json`\n")
	p("(OpenAPI %s, no token needed).\n\n", str(sp.doc, "openapi"))
	p("%s\n", strings.TrimSpace(str(info, "description")))

	paths := obj(sp.doc, "paths")
	var keys []string
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type opRef struct {
		method, path string
		item, op     map[string]any
	}
	var ops []opRef
	for _, k := range keys {
		item := obj(paths, k)
		for _, m := range methods {
			if op := obj(item, m); op != nil {
				ops = append(ops, opRef{strings.ToUpper(m), k, item, op})
			}
		}
	}

	p("\n## Routes\n\n| method | path | who may call | what |\n|---|---|---|---|\n")
	for _, o := range ops {
		p("| %s | [`%s`](#%s) | %s | %s |\n", o.method, o.path, anchor(str(o.op, "operationId")), cell(str(o.op, "x-rackfence-auth")), cell(str(o.op, "summary")))
	}

	p("\n## Operations\n")
	for _, o := range ops {
		id := str(o.op, "operationId")
		p("\n### %s\n\n`%s %s` — %s\n\n", id, o.method, o.path, str(o.op, "summary"))
		if d := strings.TrimSpace(str(o.op, "description")); d != "" {
			p("%s\n\n", d)
		}
		p("Who may call: %s.\n", str(o.op, "x-rackfence-auth"))
		var params []map[string]any
		for _, src := range []map[string]any{o.item, o.op} {
			if ps, ok := src["parameters"].([]any); ok {
				for _, pv := range ps {
					pm, _, err := sp.deref(pv.(map[string]any), "")
					if err == nil {
						params = append(params, pm)
					}
				}
			}
		}
		if len(params) > 0 {
			p("\n| parameter | in | required | type | meaning |\n|---|---|---|---|---|\n")
			for _, pm := range params {
				req := "no"
				if pm["required"] == true {
					req = "yes"
				}
				p("| `%s` | %s | %s | %s | %s |\n", str(pm, "name"), str(pm, "in"), req, cell(typeOf(obj(pm, "schema"))), cell(str(pm, "description")))
			}
		}
		if rb := obj(o.op, "requestBody"); rb != nil {
			req := "optional"
			if rb["required"] == true {
				req = "required"
			}
			p("\nRequest body (%s): %s\n", req, typeOf(obj(obj(obj(rb, "content"), "application/json"), "schema")))
		}
		p("\n| status | body | meaning |\n|---|---|---|\n")
		resps := obj(o.op, "responses")
		var codes []string
		for c := range resps {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		for _, c := range codes {
			r, _, err := sp.deref(obj(resps, c), "")
			if err != nil {
				continue
			}
			var body []string
			var cts []string
			for ct := range obj(r, "content") {
				cts = append(cts, ct)
			}
			sort.Strings(cts)
			for _, ct := range cts {
				t := typeOf(obj(obj(obj(r, "content"), ct), "schema"))
				if ct != "application/json" {
					t = ct
				}
				body = append(body, t)
			}
			p("| %s | %s | %s |\n", c, cell(strings.Join(body, ", ")), cell(str(r, "description")))
		}
	}

	p("\n## Schemas\n\nJSON field names are part of the public contract: fields are added, never renamed or removed.\n")
	schemas := obj(obj(sp.doc, "components"), "schemas")
	var names []string
	for n := range schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := obj(schemas, n)
		p("\n### %s\n\n", n)
		if d := strings.TrimSpace(str(s, "description")); d != "" {
			p("%s\n\n", d)
		}
		props := obj(s, "properties")
		if len(props) == 0 {
			if rl, ok := s["required"].([]any); ok && str(s, "$ref") != "" {
				var req []string
				for _, r := range rl {
					req = append(req, fmt.Sprintf("`%v`", r))
				}
				p("The fields of %s; required: %s.\n", typeOf(map[string]any{"$ref": s["$ref"]}), strings.Join(req, ", "))
				continue
			}
			p("Type: %s.\n", typeOf(s))
			continue
		}
		req := map[string]bool{}
		if rl, ok := s["required"].([]any); ok {
			for _, r := range rl {
				req[r.(string)] = true
			}
		}
		p("| field | type | always present | meaning |\n|---|---|---|---|\n")
		var fields []string
		for f := range props {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			ps := obj(props, f)
			r := ""
			if req[f] {
				r = "yes"
			}
			p("| `%s` | %s | %s | %s |\n", f, cell(typeOf(ps)), r, cell(str(ps, "description")))
		}
	}
	p("\n%s", addingARoute)
	return b.String()
}

const addingARoute = `## Adding a route

1. Register the handler in ` + "`coordinator/api/server.go`" + ` (` + "`routes()`" + `).
2. Describe it in ` + "`coordinator/api/openapi.yaml`" + `: under ` + "`paths:`" + `, the path with
   echo's ` + "`:param`" + ` written ` + "`{param}`" + `, and one operation per method with
   ` + "`operationId`" + `, ` + "`summary`" + `, ` + "`x-rackfence-auth`" + ` (who may call), its parameters,
   ` + "`requestBody`" + ` and every status it answers (reuse ` + "`#/components/responses/…`" + ` for
   errors and add wire types under ` + "`components.schemas`" + ` with ` + "`additionalProperties: false`" + `
   and every always-present field in ` + "`required`" + `).
3. Exercise it in ` + "`TestOpenAPIResponses`" + ` (coordinator/api/openapi_test.go) so one 2xx answer
   of a real coordinator is validated against the schema.
4. ` + "`RACKFENCE_UPDATE_DOCS=1 go test ./coordinator/api -run TestAPIDocUpToDate`" + ` regenerates this file.

` + "`TestOpenAPIMatchesRoutes`" + ` fails while a route has no operation (or the other way round);
every answer the package's integration tests record is checked against the document.
`
