package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// burstSizes are the concurrent requests sent on each fresh connection;
// burstRounds how many fresh connections each size gets.
var burstSizes = []int{2, 8, 32}

const burstRounds = 5

// TestHTTP2ConcurrentFreshConnections sends requests concurrently on
// fresh HTTP/2 connections, from every client the project ships and from
// a plain net/http client and curl as outside programs would, to a real
// two-member cluster: the leader's local routes, and a follower's
// forwarded ones. A client may use HPACK's default 4 KiB table until it
// has acknowledged the server's SETTINGS, so the first requests of a
// connection compress against entries its earlier ones added; every
// request must be answered.
func TestHTTP2ConcurrentFreshConnections(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	ms, token := startCluster(t, bin, 2, clusterOpts{})
	leader, follower := ms[0], ms[1]
	var st wire.ClusterStatus
	if _, err := do("GET", ms[0].url()+"/v1/status", token, nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.State != "leader" {
		leader, follower = ms[1], ms[0]
	}
	secret, pin := wire.ParseToken(token)
	caFile := filepath.Join(leader.dir, "tls", "ca.crt")

	// plain is what an outside program writes: net/http's default
	// transport trusting the cluster CA.
	plain := func(url string) func() func(context.Context) error {
		return func() func(context.Context) error {
			cfg, err := pki.ClientTLS(nil, pin)
			if err != nil {
				t.Fatal(err)
			}
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.TLSClientConfig = cfg
			hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
			return func(ctx context.Context) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				req.Header.Set("Authorization", "Bearer "+secret)
				resp, err := hc.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				_, _ = io.Copy(io.Discard, resp.Body)
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("%s: %s", url, resp.Status)
				}
				if resp.ProtoMajor != 2 {
					return fmt.Errorf("%s answered over %s, want HTTP/2", url, resp.Proto)
				}
				return nil
			}
		}
	}
	// project builds a shared/client the way each shipped program does,
	// without retries so that every failure counts.
	project := func(m *member, cfg client.Config, forwarded bool) func() func(context.Context) error {
		return func() func(context.Context) error {
			cfg.Coordinator, cfg.RetryFor = m.url(), -1
			if cfg.CAFile == "" {
				cfg.Token = token
			} else {
				cfg.Token = secret
			}
			c, err := client.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return func(ctx context.Context) error {
				if forwarded {
					_, err := c.ListHosts(ctx, client.HostFilter{})
					return err
				}
				_, err := c.Status(ctx)
				return err
			}
		}
	}
	shapes := []struct {
		name   string
		client func() func(context.Context) error
	}{
		{"net/http", plain(leader.url() + "/v1/whoami")},
		{"shared/client", project(leader, client.Config{}, false)},
		{"agent", project(leader, client.Config{HTTPClient: &http.Client{Transport: agent.CoordinatorTransport(nil)}}, false)},
		// rackfencectl: a CA file and a token without a pin (ctl/context.go).
		{"rackfencectl", project(leader, client.Config{CAFile: caFile}, false)},
		{"forward net/http", plain(follower.url() + "/v1/hosts")},
		{"forward shared/client", project(follower, client.Config{}, true)},
	}
	for _, s := range shapes {
		for _, n := range burstSizes {
			var bad atomic.Int64
			var firstErr atomic.Value
			for range burstRounds {
				call := s.client() // a fresh transport: a fresh connection
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				var wg sync.WaitGroup
				for range n {
					wg.Go(func() {
						if err := call(ctx); err != nil {
							bad.Add(1)
							firstErr.CompareAndSwap(nil, err.Error())
						}
					})
				}
				wg.Wait()
				cancel()
			}
			t.Logf("%-22s %2d at once: %3d of %3d failed", s.name, n, bad.Load(), n*burstRounds)
			if bad.Load() > 0 {
				t.Errorf("%s, %d concurrent requests on a fresh connection: %d of %d failed, first: %v",
					s.name, n, bad.Load(), n*burstRounds, firstErr.Load())
			}
		}
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Logf("no curl: its shape is not tried")
		return
	}
	for _, n := range burstSizes {
		bad := 0
		for range burstRounds {
			bad += curlBurst(t, leader.url()+"/v1/whoami", caFile, secret, n)
		}
		t.Logf("%-22s %2d at once: %3d of %3d failed", "curl --http2", n, bad, n*burstRounds)
		if bad > 0 {
			t.Errorf("curl --http2, %d concurrent requests on one connection: %d of %d failed", n, bad, n*burstRounds)
		}
	}
}

// curlBurst has one curl send n requests at once multiplexed on one
// HTTP/2 connection and returns how many were not answered 200.
func curlBurst(t *testing.T, url, caFile, secret string, n int) int {
	t.Helper()
	args := []string{"--http2", "-sS", "--no-progress-meter", "--cacert", caFile, "-H", "Authorization: Bearer " + secret,
		"-Z", "--parallel-max", fmt.Sprint(n), "-w", "%{http_code} %{http_version}\\n", "--max-time", "60"}
	for range n {
		args = append(args, "-o", "/dev/null", url)
	}
	out, _ := exec.Command("curl", args...).CombinedOutput()
	ok := 0
	for _, l := range strings.Split(string(out), "\n") {
		if l == "200 2" {
			ok++
		}
	}
	if ok < n {
		t.Logf("curl: %s", strings.TrimSpace(string(out)))
	}
	return n - ok
}
