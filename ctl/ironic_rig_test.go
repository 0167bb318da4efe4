package ctl

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// ironicAPI drives a test Ironic (setting up nodes; the import itself
// never writes).
type ironicAPI struct {
	t   *testing.T
	url string
}

func (a ironicAPI) do(method, path string, body any, want ...int) map[string]any {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.url+path, rd)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	ok := resp.StatusCode < 300
	for _, w := range want {
		ok = ok || resp.StatusCode == w
	}
	if !ok {
		a.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// provision asks for a provision state change and waits for state.
func (a ironicAPI) provision(node, target, state string) {
	a.t.Helper()
	a.do(http.MethodPut, "/v1/nodes/"+node+"/states/provision", map[string]any{"target": target})
	a.waitState(node, state)
}

func (a ironicAPI) waitState(node, state string) {
	a.t.Helper()
	testenv.Eventually(a.t, 3*time.Minute, node+" "+state, func() error {
		n := a.do(http.MethodGet, "/v1/nodes/"+node+"?fields=provision_state,target_provision_state,last_error", nil)
		// A failed state keeps its target (adopt failed → active).
		if n["provision_state"] != state || (n["target_provision_state"] != nil && !strings.HasSuffix(state, " failed")) {
			return fmt.Errorf("%s: %v → %v (%v)", node, n["provision_state"], n["target_provision_state"], n["last_error"])
		}
		return nil
	})
}

// snapshot is every node's and port's full JSON, sorted, to compare
// before and after an import.
func (a ironicAPI) snapshot() string {
	a.t.Helper()
	var parts []string
	for _, p := range []string{"/v1/nodes/detail", "/v1/ports/detail"} {
		m := a.do(http.MethodGet, p, nil)
		for _, k := range []string{"nodes", "ports"} {
			items, _ := m[k].([]any)
			for _, it := range items {
				b, _ := json.Marshal(it)
				parts = append(parts, string(b))
			}
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "\n")
}

// settled waits until two snapshots a sync interval apart are equal
// (Ironic's periodic tasks have nothing left to write) and returns it.
func (a ironicAPI) settled() string {
	a.t.Helper()
	var s string
	testenv.Eventually(a.t, 3*time.Minute, "Ironic's nodes to stop changing", func() error {
		s1 := a.snapshot()
		time.Sleep(12 * time.Second) // > sync_power_state_interval (10 s)
		if s = a.snapshot(); s != s1 {
			return fmt.Errorf("still changing")
		}
		return nil
	})
	return s
}

// recorder is a reverse proxy in front of Ironic that records each
// request's method and path: the import's requests, counted.
type recorder struct {
	URL    string
	mu     sync.Mutex
	reqs   []string
	tokens []string // X-Auth-Token of each request
}

func newRecorder(t *testing.T, target string) *recorder {
	r := &recorder{}
	srv := httptest.NewServer(r.handler(t, target))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// newTLSRecorder is newRecorder over https, with a certificate of its own
// CA; caFile is that CA's PEM file.
func newTLSRecorder(t *testing.T, target string) (r *recorder, caFile string) {
	r = &recorder{}
	srv := httptest.NewTLSServer(r.handler(t, target))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	caFile = filepath.Join(t.TempDir(), "ironic-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return r, caFile
}

func (r *recorder) handler(t *testing.T, target string) http.Handler {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	return http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, q.Method+" "+q.URL.Path)
		r.tokens = append(r.tokens, q.Header.Get("X-Auth-Token"))
		r.mu.Unlock()
		proxy.ServeHTTP(w, q)
	})
}

// take returns the requests (and their tokens) recorded since the last take.
func (r *recorder) take() (reqs, tokens []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reqs, tokens = r.reqs, r.tokens
	r.reqs, r.tokens = nil, nil
	return reqs, tokens
}
