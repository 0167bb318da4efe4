package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestForwardToPausedLeader pauses (SIGSTOP) the leader of three members
// and sends reads and writes to a follower, on connections to the leader
// the follower already holds and on new ones. Each is answered within
// the time an election takes plus a generous margin, well before the
// clients' 30 s: a read 503 no_leader with Retry-After; a write the same
// when it surely did not reach the leader, else 504 (it may have been
// applied). The two others elect a leader and the follower's writes
// succeed while the old leader stays paused.
func TestForwardToPausedLeader(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	ms, token := startCluster(t, bin, 3, clusterOpts{})
	var leader *member
	var followers []*member
	for _, m := range ms {
		var st wire.ClusterStatus
		if _, err := do("GET", m.url()+"/v1/status", token, nil, &st); err != nil {
			t.Fatal(err)
		}
		if st.State == "leader" {
			leader = m
		} else {
			followers = append(followers, m)
		}
	}
	if leader == nil || len(followers) != 2 {
		t.Fatalf("leader %v, followers %d", leader, len(followers))
	}
	follower := followers[0]
	// The follower holds connections to the leader from these forwards.
	for i := range 3 {
		if err := putHost(follower, token, fmt.Sprintf("warm%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	secret, pin := wire.ParseToken(token)
	cfg, err := pki.ClientTLS(nil, pin)
	if err != nil {
		t.Fatal(err)
	}
	// Longer than the clients' usual 30 s, to see how long a member holds
	// a request when nothing else ends it.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 60 * time.Second}
	defer hc.CloseIdleConnections()
	send := func(method, path string, body any) (*http.Response, []byte, time.Duration, error) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, follower.url()+path, rd)
		req.Header.Set("Authorization", "Bearer "+secret)
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return nil, nil, time.Since(start), err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b, time.Since(start), nil
	}

	if err := leader.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = leader.proc.Signal(syscall.SIGCONT) })
	type call struct{ method, path string }
	var calls []call
	for i := range 6 { // more at once than the follower holds connections: some dial
		calls = append(calls, call{"GET", "/v1/hosts"}, call{"PUT", fmt.Sprintf("/v1/hosts/paused%d", i)})
	}
	const bound = 15 * time.Second // an election takes 4 s with raft's defaults
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(func() {
			var body any
			if c.method == "PUT" {
				name := c.path[len("/v1/hosts/"):]
				body = wire.Host{Name: name, Rack: "r1", Online: true, Consumer: name}
			}
			resp, b, took, err := send(c.method, c.path, body)
			if err != nil {
				t.Errorf("%s %s: no answer after %s: %v", c.method, c.path, took.Round(time.Millisecond), err)
				return
			}
			var eb wire.ErrorBody
			_ = json.Unmarshal(b, &eb)
			t.Logf("%s %s: %d %s in %s (Retry-After %q)", c.method, c.path, resp.StatusCode, eb.Error.Code,
				took.Round(time.Millisecond), resp.Header.Get("Retry-After"))
			if took > bound {
				t.Errorf("%s %s answered after %s, want within %s", c.method, c.path, took.Round(time.Millisecond), bound)
			}
			switch {
			case resp.StatusCode == http.StatusServiceUnavailable:
				if eb.Error.Code != wire.CodeNoLeader || resp.Header.Get("Retry-After") == "" {
					t.Errorf("%s %s: 503 with code %q, Retry-After %q; want no_leader with Retry-After", c.method, c.path,
						eb.Error.Code, resp.Header.Get("Retry-After"))
				}
			case resp.StatusCode == http.StatusGatewayTimeout && c.method == "PUT":
				// Sent on a connection to the paused leader: it may apply it.
			case resp.StatusCode < 300:
				// Forwarded to the new leader, once elected.
			default:
				t.Errorf("%s %s: %d %s", c.method, c.path, resp.StatusCode, b)
			}
		})
	}
	wg.Wait()

	// The two others elect a leader; the follower forwards to it while
	// the old one is still paused.
	testenv.Eventually(t, 60*time.Second, "a write through the follower with the old leader paused", func() error {
		resp, b, _, err := send("PUT", "/v1/hosts/after-pause", wire.Host{Name: "after-pause", Rack: "r1", Online: true, Consumer: "after-pause"})
		if err != nil {
			return err
		}
		if resp.StatusCode >= 300 {
			return fmt.Errorf("%d %s", resp.StatusCode, b)
		}
		return nil
	})
	if err := leader.proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}
