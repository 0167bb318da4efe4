package api

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// from returns an HTTP client whose connections leave from ip (another
// loopback address stands for another machine).
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// get sends GET url with token (and extra headers) from hc; it returns the
// code, the Retry-After header and the body.
func get(t *testing.T, hc *http.Client, url, token string, hdr ...string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

func TestAuthFailuresRateLimited(t *testing.T) {
	testenv.SkipShort(t) // a two-member cluster and a rate-limit window: seconds, not the fast layer
	limits := func(c *Config) { c.AuthFailLimit = 5; c.AuthFailWindow = 3 * time.Second }
	n1 := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: t.TempDir(), Bootstrap: true}, limits)
	testenv.Eventually(t, 30*time.Second, "leader", func() error {
		if !n1.store.Ready() {
			return fmt.Errorf("not ready")
		}
		return nil
	})
	admin := adminTokenOf(t, n1)
	n2 := startNode(t, member.Config{ID: "n2", IP: "127.0.0.2", Dir: t.TempDir()}, limits)
	must(t, 200, "POST", n1.url+"/v1/cluster/join", admin, wire.JoinRequest{ID: "n2", RaftAddr: n2.raftAddr, HTTPAddr: n2.url}, nil)
	testenv.Eventually(t, 30*time.Second, "n2 knows the leader's API", func() error {
		if _, u := n2.store.Leader(); u == "" {
			return fmt.Errorf("no leader yet")
		}
		return nil
	})
	viewer := newToken(t, n1.url, admin, wire.RoleViewer, "")
	testenv.Eventually(t, 30*time.Second, "n2 applied the viewer token", func() error {
		if c, _, _ := get(t, from("127.0.0.20"), n2.url+"/v1/status?stale=true", viewer); c != 200 {
			return fmt.Errorf("%d", c)
		}
		return nil
	})

	attacker, neighbour := from("127.0.0.9"), from("127.0.0.10")
	// Through the follower: 5 failures (each forwarded to the leader,
	// which answers 401), then 429 from the follower for that address only.
	for i := 0; i < 5; i++ {
		if c, _, b := get(t, attacker, n2.url+"/v1/hosts", "garbage"); c != 401 {
			t.Fatalf("failure %d via the follower: %d %s", i+1, c, b)
		}
	}
	c, ra, b := get(t, attacker, n2.url+"/v1/hosts", viewer)
	if c != 429 || !strings.Contains(b, "too many failed authentications from 127.0.0.9") || !strings.Contains(b, wire.CodeTooManyRequests) {
		t.Fatalf("6th request from the attacker: %d %s", c, b)
	}
	if s, err := strconv.Atoi(ra); err != nil || s < 1 || s > 3 {
		t.Fatalf("Retry-After %q", ra)
	}
	// The leader did not count those against the follower's address: a
	// neighbour's forwarded write and read pass.
	for i := 0; i < 8; i++ {
		if c, _, b := get(t, neighbour, n2.url+"/v1/hosts", viewer); c != 200 {
			t.Fatalf("neighbour via the follower, request %d: %d %s", i+1, c, b)
		}
	}
	// Nor directly at the leader.
	if c, _, b := get(t, attacker, n1.url+"/v1/hosts", viewer); c != 200 {
		t.Fatalf("attacker's address at the leader (its own counter): %d %s", c, b)
	}
	// A client cannot escape by claiming to be a forwarded request: the
	// headers count only from a member's address.
	spoof := from("127.0.0.11")
	for i := 0; i < 5; i++ {
		get(t, spoof, n1.url+"/v1/hosts", "garbage", ForwardedHeader, "n2", ClientAddrHeader, fmt.Sprintf("10.0.0.%d", i))
	}
	if c, _, b := get(t, spoof, n1.url+"/v1/hosts", viewer, ForwardedHeader, "n2", ClientAddrHeader, "10.0.0.99"); c != 429 {
		t.Fatalf("spoofed forwarded headers escaped the limit: %d %s", c, b)
	}
	// The window ends (the follower's limiter lets the address go); it
	// may try again.
	testenv.Eventually(t, 30*time.Second, "the attacker's window over", func() error {
		if left, blocked := n2.srv.limiter.blocked("127.0.0.9", time.Now()); blocked {
			return fmt.Errorf("still blocked for %s", left)
		}
		return nil
	})
	if c, _, b := get(t, attacker, n2.url+"/v1/hosts", viewer); c != 200 {
		t.Fatalf("after the window: %d %s", c, b)
	}
	_, _, metrics := get(t, from("127.0.0.20"), n1.url+"/metrics", "")
	if !strings.Contains(metrics, `rackfence_auth_failures_total{reason="unknown"}`) || !strings.Contains(metrics, "rackfence_auth_rate_limited_total 1") {
		t.Fatalf("metrics on the leader lack the auth counters:\n%s", grep(metrics, "rackfence_auth"))
	}
	_, _, metrics = get(t, from("127.0.0.20"), n2.url+"/metrics", "")
	if !strings.Contains(metrics, "rackfence_auth_rate_limited_total 1") {
		t.Fatalf("metrics on the follower:\n%s", grep(metrics, "rackfence_auth"))
	}

	// The leader's audit trail names the follower that forwarded a write
	// and the client behind it.
	op := newToken(t, n1.url, admin, wire.RoleOperator, "")
	req, _ := http.NewRequest("PUT", n2.url+"/v1/hosts/h1", strings.NewReader(`{"rack":"r1"}`))
	req.Header.Set("Authorization", "Bearer "+op)
	resp, err := neighbour.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("write via follower: %v %v", resp, err)
	}
	resp.Body.Close()
	var l wire.List[wire.AuditRecord]
	must(t, 200, "GET", n1.url+"/v1/audit?limit=5", admin, nil, &l)
	last := l.Items[len(l.Items)-1]
	if last.Route != "/v1/hosts/:name" || last.Via != "n2" || last.Remote != "127.0.0.10" || last.Member != "n1" || last.Code != 201 {
		t.Fatalf("audit record of a forwarded write: %+v", last)
	}
	var l2 wire.List[wire.AuditRecord]
	must(t, 200, "GET", n2.url+"/v1/audit", admin, nil, &l2)
	for _, r := range l2.Items {
		if r.Route == "/v1/hosts/:name" {
			t.Fatalf("the follower recorded a request it only relayed: %+v", r)
		}
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
