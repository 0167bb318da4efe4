package member_test

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/coordtest/member"
)

var hc = &http.Client{Timeout: 30 * time.Second}

// TestServeCloseAndRestart: a bootstrapped member leads, writes its admin
// token and serves the handler it is given; Close stops serving (and runs
// the stop hook once, however often it is called); a member opened again
// on the same data dir and ports has the same addresses and leads again
// from what it stored.
func TestServeCloseAndRestart(t *testing.T) {
	m := member.Open(t, member.Config{ID: "n1", Bootstrap: true})
	stops := 0
	m.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "api of n1") }),
		func() { stops++ })
	m.WaitLeader(t)
	if m.AdminToken(t) == "" {
		t.Fatal("empty admin token")
	}
	resp, err := hc.Get(m.URL + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "api of n1" {
		t.Fatalf("served %q, want the handler's answer", body)
	}

	_, rp, _ := net.SplitHostPort(m.RaftAddr)
	raftPort, _ := strconv.Atoi(rp)
	m.Close()
	m.Close()
	if stops != 1 {
		t.Fatalf("stop hook ran %d times, want 1", stops)
	}
	if resp, err := hc.Get(m.URL + "/v1/health"); err == nil {
		resp.Body.Close()
		t.Fatal("still served after Close")
	}

	again := member.Open(t, member.Config{ID: "n1", Dir: m.Dir, RaftPort: raftPort, HTTPPort: m.HTTPPort()})
	if again.URL != m.URL || again.RaftAddr != m.RaftAddr {
		t.Fatalf("reopened at %s / %s, want %s / %s", again.URL, again.RaftAddr, m.URL, m.RaftAddr)
	}
	again.WaitLeader(t)
}
