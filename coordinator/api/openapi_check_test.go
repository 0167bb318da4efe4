package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// spec is the OpenAPI document as the tests check answers against it:
// the raw JSON and a compiler of its schemas (JSON Schema 2020-12, the
// dialect of OpenAPI 3.1) addressed by JSON pointer.
type spec struct {
	doc map[string]any

	mu      sync.Mutex
	schemas map[string]*jsonschema.Schema
	comp    *jsonschema.Compiler
}

const specURL = "file:///openapi.json"

var (
	specOnce sync.Once
	specVal  *spec
	specErr  error
)

// loadSpec parses OpenAPIJSON once per test binary.
func loadSpec(t testing.TB) *spec {
	t.Helper()
	specOnce.Do(func() {
		specVal, specErr = newSpec(OpenAPIJSON)
	})
	if specErr != nil {
		t.Fatalf("openapi.yaml: %v", specErr)
	}
	return specVal
}

func newSpec(js []byte) (*spec, error) {
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(specURL, inst); err != nil {
		return nil, err
	}
	return &spec{doc: doc, comp: c, schemas: map[string]*jsonschema.Schema{}}, nil
}

var methods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

// operations lists "METHOD /path" for every operation of the document.
func (s *spec) operations() []string {
	var out []string
	for p, v := range s.doc["paths"].(map[string]any) {
		item := v.(map[string]any)
		for _, m := range methods {
			if _, ok := item[m]; ok {
				out = append(out, strings.ToUpper(m)+" "+p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// match finds the path template a request path falls under: the one with
// the most literal segments among those that match.
func (s *spec) match(path string) (string, bool) {
	segs := strings.Split(path, "/")
	best, bestLit := "", -1
	for tmpl := range s.doc["paths"].(map[string]any) {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		lit, ok := 0, true
		for i, t := range ts {
			if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
				if segs[i] == "" {
					ok = false
					break
				}
				continue
			}
			if t != segs[i] {
				ok = false
				break
			}
			lit++
		}
		if ok && lit > bestLit {
			best, bestLit = tmpl, lit
		}
	}
	return best, bestLit >= 0
}

// pointer escapes one JSON pointer token.
func pointer(tok string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// deref follows a local $ref ("#/components/...") once, returning the
// object and its JSON pointer.
func (s *spec) deref(obj map[string]any, ptr string) (map[string]any, string, error) {
	ref, ok := obj["$ref"].(string)
	if !ok {
		return obj, ptr, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, "", fmt.Errorf("%s: only local $ref are supported, got %q", ptr, ref)
	}
	var cur any = s.doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("%s: $ref %q does not resolve", ptr, ref)
		}
		if cur, ok = m[tok]; !ok {
			return nil, "", fmt.Errorf("%s: $ref %q does not resolve", ptr, ref)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("%s: $ref %q is not an object", ptr, ref)
	}
	return m, ref[1:], nil
}

// schemaAt compiles (once) the schema at a JSON pointer of the document.
func (s *spec) schemaAt(ptr string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.schemas[ptr]; ok {
		return sch, nil
	}
	sch, err := s.comp.Compile(specURL + "#" + ptr)
	if err != nil {
		return nil, err
	}
	s.schemas[ptr] = sch
	return sch, nil
}

// operation returns the documented operation for a request.
func (s *spec) operation(method, path string) (tmpl string, op map[string]any, ptr string, err error) {
	tmpl, ok := s.match(path)
	if !ok {
		return "", nil, "", fmt.Errorf("%s %s: no path of the document matches", method, path)
	}
	item := s.doc["paths"].(map[string]any)[tmpl].(map[string]any)
	op, ok = item[strings.ToLower(method)].(map[string]any)
	if !ok {
		return tmpl, nil, "", fmt.Errorf("%s %s: path %s has no %s operation", method, path, tmpl, method)
	}
	return tmpl, op, "/paths/" + pointer(tmpl) + "/" + strings.ToLower(method), nil
}

// checkResponse validates one answer against the document: the status must
// be documented for the operation (405 is documented globally), the media
// type must be one the response lists, and a JSON body must match its
// schema. It returns the operation's ID.
func (s *spec) checkResponse(method, path string, status int, ctype string, body []byte) (string, error) {
	_, op, ptr, err := s.operation(method, path)
	if err != nil {
		// An endpoint the document does not have is answered 404 (or
		// 405) with the error body, as the document's info says.
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			return "", fmt.Errorf("%v, and the answer is %d, not a 404/405 error", err, status)
		}
		return "", s.checkBody("/components/responses/NotFound/content/application~1json/schema", method, path, "unknown endpoint", status, body)
	}
	id, _ := op["operationId"].(string)
	resps, _ := op["responses"].(map[string]any)
	code := strconv.Itoa(status)
	r, ok := resps[code].(map[string]any)
	rptr := ptr + "/responses/" + code
	if !ok {
		return id, fmt.Errorf("%s %s (%s): status %d is not documented: %s", method, path, id, status, trim(body))
	}
	if r, rptr, err = s.deref(r, rptr); err != nil {
		return id, err
	}
	content, _ := r["content"].(map[string]any)
	if len(content) == 0 {
		if len(bytes.TrimSpace(body)) > 0 {
			return id, fmt.Errorf("%s %s (%s) %d: documented without a body, got %s", method, path, id, status, trim(body))
		}
		return id, nil
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	if _, ok := content[mt]; !ok {
		return id, fmt.Errorf("%s %s (%s) %d: content type %q is not documented", method, path, id, status, ctype)
	}
	if mt != "application/json" {
		return id, nil
	}
	return id, s.checkBody(rptr+"/content/"+pointer(mt)+"/schema", method, path, id, status, body)
}

// checkBody validates a JSON body against the schema at ptr.
func (s *spec) checkBody(ptr, method, path, id string, status int, body []byte) error {
	sch, err := s.schemaAt(ptr)
	if err != nil {
		return fmt.Errorf("%s (%d): compile schema: %v", id, status, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %s (%s) %d: body is not JSON: %v: %s", method, path, id, status, err, trim(body))
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("%s %s (%s) %d: body does not match the schema: %v\nbody: %s", method, path, id, status, err, trim(body))
	}
	return nil
}

func trim(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// checkRequest validates the JSON body of a request the server accepted
// (2xx) against the operation's requestBody schema, so the document's
// request schemas are checked by real traffic too.
func (s *spec) checkRequest(method, path string, body []byte) error {
	_, op, ptr, err := s.operation(method, path)
	if err != nil {
		return err
	}
	id, _ := op["operationId"].(string)
	rb, ok := op["requestBody"].(map[string]any)
	if !ok {
		return nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if rb["required"] == true {
			return fmt.Errorf("%s %s (%s): accepted without the required body", method, path, id)
		}
		return nil
	}
	return s.checkBody(ptr+"/requestBody/content/application~1json/schema", method, path, id+" request", 0, body)
}

// answer is one recorded HTTP exchange.
type answer struct {
	method, path string
	status       int
	ctype        string
	body         []byte
	request      []byte
	cut          bool // the client never received it whole: nothing to check
}

// recorder wraps a server's handler and keeps every answer it gives, so
// the integration tests' real traffic can be checked against the document.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	got  []answer
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req []byte
	if r.Body != nil {
		// At most 2 MiB is kept; the server refuses more than 1 MiB.
		req, _ = io.ReadAll(io.LimitReader(r.Body, 2*MaxRackStatusBody))
		r.Body = io.NopCloser(bytes.NewReader(req))
	}
	tw := &teeWriter{ResponseWriter: w, status: http.StatusOK}
	rec.next.ServeHTTP(tw, r)
	rec.mu.Lock()
	rec.got = append(rec.got, answer{method: r.Method, path: r.URL.Path, status: tw.status,
		ctype: tw.Header().Get("Content-Type"), body: tw.buf.Bytes(), request: req, cut: tw.cut})
	rec.mu.Unlock()
}

func (rec *recorder) answers() []answer {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]answer(nil), rec.got...)
}

// check validates every recorded answer, returning the operation IDs seen
// with a 2xx status and one error per answer that does not match.
func (rec *recorder) check(s *spec) (ok2xx map[string]bool, errs []error) {
	ok2xx = map[string]bool{}
	for _, a := range rec.answers() {
		if notAPI(a.path) || a.cut {
			continue
		}
		id, err := s.checkResponse(a.method, a.path, a.status, a.ctype, a.body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if a.status < 300 {
			if err := s.checkRequest(a.method, a.path, a.request); err != nil {
				errs = append(errs, err)
				continue
			}
			ok2xx[id] = true
		}
	}
	return ok2xx, errs
}

// teeWriter copies the body it writes (the proxy's flushes pass through
// Unwrap).
type teeWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	buf         bytes.Buffer
	// cut: a write failed (the client took nothing for too long and was
	// cut off, or went away): the answer never arrived whole.
	cut bool
}

func (w *teeWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	n, err := w.ResponseWriter.Write(b)
	w.buf.Write(b[:n])
	if err != nil {
		w.cut = true
	}
	return n, err
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
