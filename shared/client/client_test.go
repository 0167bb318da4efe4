package client

// These tests drive the client's transport rules (failover, redirects that
// keep the Authorization header, 503 retries, error decoding) against
// small net/http servers: the coordinator cannot be made to produce each of
// these faults on demand. The tests against the real coordinator process
// are in coordinator_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

func newTestClient(t *testing.T, urls string) *Client {
	t.Helper()
	c, err := New(Config{Coordinator: urls, Token: "secret-token", Timeout: 10 * time.Second, RetryFor: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// closedURL returns the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func TestFailoverToNextMember(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, wire.ClusterStatus{NodeID: "n2", State: "leader"})
	}))
	defer srv.Close()
	dead := closedURL(t)
	c := newTestClient(t, dead+","+srv.URL)
	st, err := c.Status(context.Background())
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if st.NodeID != "n2" {
		t.Fatalf("nodeID = %q, want n2", st.NodeID)
	}
	// The member that answered is now tried first.
	if got := c.cur.Load(); got != 1 {
		t.Fatalf("current member = %d, want 1", got)
	}
}

func TestUnreachableNamesURLs(t *testing.T) {
	a, b := closedURL(t), closedURL(t)
	c, err := New(Config{Coordinator: a + "," + b, RetryFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Status(context.Background())
	if !errors.Is(err, ErrUnreachable) || !IsUnreachable(err) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	for _, u := range []string{a, b} {
		if !strings.Contains(err.Error(), u) {
			t.Errorf("error %q does not name %s", err, u)
		}
	}
}

func TestRedirectKeepsAuthorizationAcrossHosts(t *testing.T) {
	// The leader listens on 127.0.0.2, the follower on 127.0.0.1: Go's
	// http.Client would drop the Authorization header on this redirect.
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("127.0.0.2 not usable here: %v", err)
	}
	var gotAuth atomic.Value
	leader := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		var h wire.Host
		if err := json.NewDecoder(r.Body).Decode(&h); err != nil {
			writeJSON(w, 400, wire.ErrorBody{Error: wire.ErrorDetail{Code: "bad_request", Message: err.Error()}})
			return
		}
		writeJSON(w, 201, h)
	})}}
	leader.Start()
	defer leader.Close()
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, leader.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer follower.Close()

	c := newTestClient(t, follower.URL)
	h, created, err := c.ApplyHost(context.Background(), &wire.Host{Name: "r1-h01", Rack: "r1"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !created || h.Name != "r1-h01" {
		t.Fatalf("created=%v host=%+v", created, h)
	}
	if got, _ := gotAuth.Load().(string); got != "Bearer secret-token" {
		t.Fatalf("leader saw Authorization %q", got)
	}
}

func TestRetryOn503HonoursRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.Header().Set("Retry-After", "0")
			writeJSON(w, 503, wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeNoLeader, Message: "no leader"}})
			return
		}
		writeJSON(w, 200, wire.List[wire.Rack]{Items: []wire.Rack{{Name: "r1"}}, Index: 7})
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	l, err := c.Racks(context.Background())
	if err != nil {
		t.Fatalf("racks: %v", err)
	}
	if calls.Load() != 3 || len(l.Items) != 1 || l.Index != 7 {
		t.Fatalf("calls=%d list=%+v", calls.Load(), l)
	}
}

func TestRetryOn503GivesUpWithinBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, 503, wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeNoLeader, Message: "no leader elected"}})
	}))
	defer srv.Close()
	c, _ := New(Config{Coordinator: srv.URL, RetryFor: 1500 * time.Millisecond})
	_, err := c.Racks(context.Background())
	if !IsNoLeader(err) {
		t.Fatalf("err = %v, want a 503", err)
	}
}

func TestErrorDecoding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/missing"):
			writeJSON(w, 404, wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeNotFound, Message: `host "missing" not found`}})
		case strings.HasSuffix(r.URL.Path, "/status"):
			writeJSON(w, 409, wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeStaleEpoch, Message: "epoch 3 is stale; current 5"}})
		case strings.HasSuffix(r.URL.Path, "/bad"):
			writeJSON(w, 400, wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeBadRequest, Message: "rack is required", Field: "rack"}})
		default:
			w.WriteHeader(401)
			fmt.Fprint(w, "<html>nope</html>")
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	if _, err := c.GetHost(ctx, "missing"); !IsNotFound(err) || IsConflict(err) {
		t.Errorf("get missing: %v", err)
	}
	err := c.ReportStatus(ctx, "h1", wire.StatusReport{Epoch: 3})
	if !IsStaleEpoch(err) || !IsConflict(err) {
		t.Errorf("report: %v", err)
	}
	_, _, err = c.ApplyHost(ctx, &wire.Host{Name: "bad"})
	if e, ok := AsError(err); !ok || e.Field != "rack" || e.Status != 400 {
		t.Errorf("apply bad: %#v", err)
	}
	_, err = c.Racks(ctx)
	if !IsUnauthorized(err) {
		t.Errorf("racks: %v", err)
	}
	if strings.Contains(err.Error(), "secret-token") {
		t.Errorf("error leaks the token: %v", err)
	}
}

func TestListAcceptsBareArray(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("stale") != "true" {
			writeJSON(w, 400, wire.ErrorBody{Error: wire.ErrorDetail{Code: "bad_request", Message: "want stale"}})
			return
		}
		writeJSON(w, 200, []wire.Member{{ID: "n1"}, {ID: "n2"}})
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL).WithStale(true)
	l, err := c.Members(context.Background())
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("members: %v %+v", err, l)
	}
}

func TestWatchOutlivesRequestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("rack") != "r1" || q.Get("index") != "42" || q.Get("timeout") != "1.5s" {
			writeJSON(w, 400, wire.ErrorBody{Error: wire.ErrorDetail{Code: "bad_request", Message: "query " + r.URL.RawQuery}})
			return
		}
		time.Sleep(1500 * time.Millisecond)
		writeJSON(w, 200, wire.WatchResponse{Index: 43, Hosts: []wire.Host{{Name: "r1-h01", Rack: "r1"}}})
	}))
	defer srv.Close()
	c, _ := New(Config{Coordinator: srv.URL, Timeout: 500 * time.Millisecond})
	wr, err := c.Watch(context.Background(), "r1", 42, 1500*time.Millisecond)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	if wr.Index != 43 || len(wr.Hosts) != 1 {
		t.Fatalf("watch = %+v", wr)
	}
}

func TestParseURLs(t *testing.T) {
	us, err := ParseURLs(" http://a:1/ , b:2,https://c")
	if err != nil || len(us) != 3 || us[1].String() != "https://b:2" || us[0].String() != "http://a:1" { // no scheme: https
		t.Fatalf("ParseURLs = %v, %v", us, err)
	}
	for _, bad := range []string{"", " , ", "ftp://x", "http://"} {
		if _, err := ParseURLs(bad); err == nil {
			t.Errorf("ParseURLs(%q) accepted", bad)
		}
	}
}

func TestNoLeaderOnOneMemberFailsOver(t *testing.T) {
	var cutCalls atomic.Int32
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cutCalls.Add(1)
		w.Header().Set("Retry-After", "5")
		writeJSON(w, 503, wire.ErrorBody{Error: wire.ErrorDetail{Code: wire.CodeNoLeader, Message: "no leader"}})
	}))
	defer cut.Close()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, wire.ClusterStatus{NodeID: "n2"})
	}))
	defer ok.Close()
	c := newTestClient(t, cut.URL+","+ok.URL)
	st, err := c.Status(context.Background())
	if err != nil || st.NodeID != "n2" {
		t.Fatalf("status: %+v %v", st, err)
	}
	// It moved on to the next member at once rather than retrying the
	// cut-off one after its Retry-After.
	if n := cutCalls.Load(); n != 1 {
		t.Errorf("the member without a leader was asked %d times, want 1", n)
	}
	// And the next request starts at the member that answered.
	if _, err := c.Status(context.Background()); err != nil || cutCalls.Load() != 1 {
		t.Errorf("second request: %v, cut-off member asked %d times", err, cutCalls.Load())
	}
}

// TestWriteNotRepeatedAfterTimeout: a write whose member stops answering
// after it was sent is not repeated on another member (the first copy may
// still be applied later, after a newer write: chaos harness seeds 100 and
// 200); the error says it may have been applied. A read fails over.
func TestWriteNotRepeatedAfterTimeout(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer hang.Close()
	defer close(release)
	var other atomic.Int32
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.Add(1)
		if r.Method == http.MethodGet {
			writeJSON(w, 200, wire.ClusterStatus{NodeID: "n2"})
			return
		}
		writeJSON(w, 200, wire.Host{Name: "h1", Rack: "r1"})
	}))
	defer ok.Close()
	c, err := New(Config{Coordinator: hang.URL + "," + ok.URL, Token: "t", Timeout: 200 * time.Millisecond, RetryFor: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, write := range []func() error{
		func() error {
			_, _, err := c.ApplyHost(context.Background(), &wire.Host{Name: "h1", Rack: "r1"})
			return err
		},
		func() error { _, err := c.DeleteHost(context.Background(), "h1"); return err },
		func() error { return c.Attach(context.Background(), "h1") },
	} {
		c.cur.Store(0)
		err := write()
		if err == nil || !strings.Contains(err.Error(), "may have been applied") {
			t.Fatalf("write after a timeout: err = %v, want one saying it may have been applied", err)
		}
		if n := other.Load(); n != 0 {
			t.Fatalf("the write was repeated on the other member (%d requests)", n)
		}
	}
	c.cur.Store(0)
	if _, err := c.Status(context.Background()); err != nil {
		t.Fatalf("a read did not fail over: %v", err)
	}
	if other.Load() != 1 {
		t.Fatalf("other member saw %d requests, want the one read", other.Load())
	}
}

// TestErrorMatchesWireSentinels: an answer's *Error matches the shared/wire
// sentinel of its code through any wrapping, whether the code came in a
// rackfence error body or was derived from a bare status (a proxy's page).
func TestErrorMatchesWireSentinels(t *testing.T) {
	base, _ := url.Parse("https://127.0.0.1:8443")
	cases := []struct {
		status int
		body   string
		want   *wire.WireError
		not    *wire.WireError
	}{
		{409, `{"error":{"code":"stale_epoch","message":"epoch 3 is not current"}}`, wire.ErrStaleEpoch, wire.ErrConflict},
		{503, `{"error":{"code":"secrets_key_missing","message":"no key k1"}}`, wire.ErrSecretsKeyMissing, wire.ErrNoLeader},
		{404, `<html>nothing here</html>`, wire.ErrNotFound, wire.ErrInternal},
		{429, `slow down`, wire.ErrTooManyRequests, wire.ErrInternal},
		{502, `bad gateway`, wire.ErrInternal, wire.ErrNoLeader},
	}
	for _, c := range cases {
		e := newError(&http.Response{StatusCode: c.status}, []byte(c.body), base, request{method: "GET", path: "/v1/hosts/h1"})
		err := fmt.Errorf("reconcile: %w", e)
		if !errors.Is(err, c.want) {
			t.Errorf("%d %s: code %s does not match %s", c.status, c.body, e.Code, c.want.Code)
		}
		if errors.Is(err, c.not) {
			t.Errorf("%d %s: code %s matches %s", c.status, c.body, e.Code, c.not.Code)
		}
	}
}
