package bmc

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeRF is a small Redfish service made of documents, for the shapes and
// failure modes the layer must handle beyond bmcsim's profiles: a login
// refused with 405, a device ignoring a PATCH, a session expiring. It
// serves GET of every document, PATCH (merged, If-Match checked against the
// document's ETag), POST to action targets (handled by actions), session
// login when sessions is true, and HTTP Basic always.
type fakeRF struct {
	t        testing.TB
	srv      *httptest.Server
	mu       sync.Mutex
	docs     map[string]map[string]any
	gen      map[string]int
	actions  map[string]func(f *fakeRF, body map[string]any) int // path → status
	sessions bool                                                // serve session login
	login    int                                                 // status a login gets (0: 201)
	expand   int                                                 // status of a GET with $expand (0: the query is ignored)
	// expandEmpty: a GET with $expand answers a collection with no
	// Members (its Members@odata.count kept); selects: status of a GET
	// with $select (0: the query is ignored); selectDrops: $select answers
	// only @odata.id (a service that drops what was asked).
	expandEmpty bool
	selects     int
	selectDrops bool
	tokens      map[string]bool
	reqs        []string // "METHOD path auth" of every request
	patches     []fakePatch
}

type fakePatch struct {
	Path, IfMatch string
	Body          map[string]any
}

func newFakeRF(t testing.TB, docs map[string]map[string]any) *fakeRF {
	f := &fakeRF{t: t, docs: docs, gen: map[string]int{}, actions: map[string]func(*fakeRF, map[string]any) int{}, tokens: map[string]bool{}}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

// addr is the redfish+http:// address of the service, with path appended.
func (f *fakeRF) addr(path string) string {
	return "redfish+http://" + strings.TrimPrefix(f.srv.URL, "http://") + path
}

func (f *fakeRF) etag(p string) string { return fmt.Sprintf(`W/"%d"`, f.gen[p]) }

func (f *fakeRF) doc(p string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]any{}
	for k, v := range f.docs[p] {
		out[k] = v
	}
	return out
}

func (f *fakeRF) set(p string, kv map[string]any) {
	for k, v := range kv {
		f.docs[p][k] = v
	}
	f.gen[p]++
}

func (f *fakeRF) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

func (f *fakeRF) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p := strings.TrimRight(r.URL.Path, "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	auth := "none"
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		auth = "token"
		if !f.tokens[tok] {
			auth = "bad-token"
		}
	} else if u, pw, ok := r.BasicAuth(); ok {
		auth = "basic"
		if u != "admin" || pw != "password" {
			auth = "bad-basic"
		}
	}
	q := ""
	if r.URL.RawQuery != "" {
		q = "?" + r.URL.RawQuery
	}
	f.reqs = append(f.reqs, r.Method+" "+p+q+" "+auth)
	if p == "/redfish/v1" && r.Method == http.MethodGet {
		writeDoc(w, f.docs[p], f.etag(p))
		return
	}
	if p == "/redfish/v1/SessionService/Sessions" && r.Method == http.MethodPost {
		if !f.sessions {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if f.login != 0 {
			w.WriteHeader(f.login)
			return
		}
		var cred struct{ UserName, Password string }
		_ = json.Unmarshal(body, &cred)
		if cred.UserName != "admin" || cred.Password != "password" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		tok := fmt.Sprintf("tok%d", len(f.tokens)+1)
		f.tokens[tok] = true
		w.Header().Set("X-Auth-Token", tok)
		w.Header().Set("Location", "/redfish/v1/SessionService/Sessions/"+tok)
		w.WriteHeader(http.StatusCreated)
		return
	}
	if auth != "token" && auth != "basic" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodDelete:
		if tok, ok := strings.CutPrefix(p, "/redfish/v1/SessionService/Sessions/"); ok {
			delete(f.tokens, tok)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	case http.MethodGet:
		if f.expand != 0 && r.URL.Query().Has("$expand") {
			w.WriteHeader(f.expand)
			return
		}
		if f.selects != 0 && r.URL.Query().Has("$select") {
			w.WriteHeader(f.selects)
			return
		}
		if d, ok := f.docs[p]; ok && f.selectDrops && r.URL.Query().Has("$select") {
			writeDoc(w, map[string]any{"@odata.id": d["@odata.id"]}, f.etag(p))
			return
		}
		if d, ok := f.docs[p]; ok && f.expandEmpty && r.URL.Query().Has("$expand") && d["Members"] != nil {
			writeDoc(w, map[string]any{"@odata.id": p, "Members": []any{}, "Members@odata.count": d["Members@odata.count"]}, f.etag(p))
			return
		}
		if d, ok := f.docs[p]; ok {
			writeDoc(w, d, f.etag(p))
			return
		}
	case http.MethodPatch:
		if _, ok := f.docs[p]; ok {
			im := r.Header.Get("If-Match")
			if im != "" && im != f.etag(p) {
				w.WriteHeader(http.StatusPreconditionFailed)
				return
			}
			var m map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			f.patches = append(f.patches, fakePatch{Path: p, IfMatch: im, Body: m})
			if h, ok := f.actions["PATCH "+p]; ok {
				w.WriteHeader(h(f, m))
				return
			}
			f.set(p, m)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	case http.MethodPost:
		if h, ok := f.actions[p]; ok {
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			f.patches = append(f.patches, fakePatch{Path: p, IfMatch: r.Header.Get("If-Match"), Body: m})
			w.WriteHeader(h(f, m))
			return
		}
	}
	w.WriteHeader(http.StatusNotFound)
}

func writeDoc(w http.ResponseWriter, d map[string]any, etag string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("ETag", etag)
	_ = json.NewEncoder(w).Encode(d)
}

func odata(p string) map[string]any { return map[string]any{"@odata.id": p} }

func odatas(ps ...string) []any {
	out := []any{}
	for _, p := range ps {
		out = append(out, odata(p))
	}
	return out
}

func coll(ps ...string) map[string]any {
	return map[string]any{"Members": odatas(ps...), "Members@odata.count": len(ps)}
}

// fakeRoot is a service root; sessions adds the session service links.
func fakeRoot(sessions bool) map[string]any {
	r := map[string]any{"@odata.id": "/redfish/v1", "RedfishVersion": "1.15.0", "Vendor": "Fake",
		"Systems": odata("/redfish/v1/Systems"), "Managers": odata("/redfish/v1/Managers")}
	if sessions {
		r["SessionService"] = odata("/redfish/v1/SessionService")
		r["Links"] = map[string]any{"Sessions": odata("/redfish/v1/SessionService/Sessions")}
	}
	return r
}

// fakeSystem is a ComputerSystem at p managed by mgr with a Reset action
// that changes its PowerState.
func fakeSystem(f *fakeRF, p, mgr string, extra map[string]any) {
	d := map[string]any{"@odata.id": p, "Id": p[strings.LastIndex(p, "/")+1:], "PowerState": "Off",
		"Boot":    map[string]any{"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled"},
		"Links":   map[string]any{"ManagedBy": odatas(mgr)},
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{"target": p + "/Actions/ComputerSystem.Reset"}}}
	for k, v := range extra {
		d[k] = v
	}
	f.docs[p] = d
	f.actions[p+"/Actions/ComputerSystem.Reset"] = func(f *fakeRF, b map[string]any) int {
		switch b["ResetType"] {
		case "On":
			f.set(p, map[string]any{"PowerState": "On"})
		case "ForceOff":
			f.set(p, map[string]any{"PowerState": "Off"})
		default:
			return http.StatusBadRequest
		}
		return http.StatusNoContent
	}
}

// jsonString is v as JSON with sorted keys.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
