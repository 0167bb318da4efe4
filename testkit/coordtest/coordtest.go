package coordtest

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/coordinator"
	coordapi "github.com/rackfence/rackfence/coordinator/api"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Options configure Start. The zero value is a good default: a new
// single-member cluster in a temporary directory.
type Options struct {
	// Tier is the cluster's tier name (default "default").
	Tier string
	// ID is the member's node ID (default TIER-1).
	ID string
	// IP is the loopback address it listens on (default 127.0.0.1; .2
	// and .3 make a cluster look like three hosts).
	IP string
	// Dir is the data directory. "": a new one, and the member bootstraps
	// a cluster of one. Set (without Join): the data dir of a member that
	// was the only one (a restart, a restored backup), which Start waits
	// to lead.
	Dir string
	// Join starts a member that waits to be added by a leader (the test
	// posts /v1/cluster/join to it), or restarts a follower on Dir; Start
	// returns once it serves, without waiting for a leader.
	Join bool
	// RaftPort and HTTPPort fix the ports (0 = free ones); a restart
	// passes the old member's.
	RaftPort, HTTPPort int
	// Secrets is the keyring that seals credentials; members of one
	// cluster share one. nil: a new key.
	Secrets *seal.Holder
	// NoCredentials leaves the credentials empty; by default Start sets
	// "bmc" = admin/password, as rig.StartCoordinator does.
	NoCredentials bool
	// WatchTimeout is the longest a watch blocks (default 30s, the
	// server's default; a client's shorter ?timeout= is honoured).
	WatchTimeout time.Duration
	// Logger receives the coordinator's logs; nil discards them (or
	// writes them to stderr under go test -v).
	Logger *slog.Logger
	// Store, when not nil, changes the store's Config before it opens.
	Store func(*coordinator.Config)
	// API, when not nil, changes the API's Config before it is built.
	API func(*coordapi.Config)
}

// Coordinator is one in-process coordinator member. Start stops it at the
// test's cleanup.
type Coordinator struct {
	// ID is its node ID.
	ID string
	// URL is the API's base URL (http://IP:PORT).
	URL string
	// RaftAddr is IP:port of its Raft transport.
	RaftAddr string
	// Dir is the member's data directory.
	Dir string
	// Store is the member's state (for assertions a client cannot make).
	Store *coordinator.Store
	// Registry holds its metrics (the store's and the API's).
	Registry *prometheus.Registry
	// Admin is a client with the bootstrap admin token AdminToken (nil
	// and "" on a member whose data dir holds none: a joiner, a restored
	// backup).
	Admin      *client.Client
	AdminToken string
	// Keys is the keyring that seals its credentials (a backup restore
	// needs it); Secrets holds it.
	Keys    *seal.Keyring
	Secrets *seal.Holder

	t testing.TB
	m *member.Member
}

// Start opens a coordinator member (coordtest/member) and serves its API
// (coordinator/api). A new cluster's member (no Dir, no Join) is waited
// for until it leads and accepts an authenticated write (credentials
// "bmc" = admin/password are set unless NoCredentials); a reopened
// single member until it leads; a joiner not at all.
func Start(t testing.TB, o Options) *Coordinator {
	t.Helper()
	if o.Tier == "" {
		o.Tier = "default"
	}
	if o.ID == "" {
		o.ID = o.Tier + "-1"
	}
	m := member.Open(t, member.Config{ID: o.ID, IP: o.IP, Dir: o.Dir, Bootstrap: o.Dir == "" && !o.Join,
		RaftPort: o.RaftPort, HTTPPort: o.HTTPPort, Secrets: o.Secrets, Logger: o.Logger, Store: o.Store})
	c := &Coordinator{t: t, m: m, ID: o.ID, URL: m.URL, RaftAddr: m.RaftAddr, Dir: m.Dir, Store: m.Store,
		Registry: m.Registry, Keys: m.Secrets.Get(), Secrets: m.Secrets}
	acfg := coordapi.Config{Store: m.Store, Tier: o.Tier, Logger: m.Logger, Registry: m.Registry, WatchTimeout: o.WatchTimeout}
	if o.API != nil {
		o.API(&acfg)
	}
	a := coordapi.New(acfg)
	m.Serve(a.Handler(), func() { a.Close() })
	if o.Join {
		return c
	}
	m.WaitLeader(t)
	if _, err := os.Stat(filepath.Join(m.Dir, coordinator.AdminTokenFile)); err != nil {
		return c
	}
	c.AdminToken = m.AdminToken(t)
	c.Admin = c.client(c.AdminToken)
	if o.NoCredentials {
		return c
	}
	testenv.Eventually(t, 30*time.Second, "coordtest: the admin token accepted", func() error {
		ctx, cancel := c.ctx()
		defer cancel()
		return c.Admin.SetCredentials(ctx, "bmc", wire.Credentials{Username: "admin", Password: "password"})
	})
	return c
}

// Restart closes the member and starts it again on its data dir, ports
// and keyring with o (o.Dir, the ports and Secrets are set from c; o.Join
// for a member of a larger cluster).
func (c *Coordinator) Restart(o Options) *Coordinator {
	c.t.Helper()
	c.Close()
	o.ID, o.Dir, o.Secrets = c.ID, c.Dir, c.Secrets
	o.IP, o.RaftPort, o.HTTPPort = c.m.IP, portOf(c.t, c.RaftAddr), c.m.HTTPPort()
	return Start(c.t, o)
}

func portOf(t testing.TB, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("coordtest: address %q: %v", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("coordtest: address %q: %v", addr, err)
	}
	return n
}

// Close stops serving and closes the store (Start registers it as a
// cleanup; calling it again does nothing). In-flight requests, a watch's
// long poll included, are cut.
func (c *Coordinator) Close() { c.m.Close() }

// Token creates a token of role (wire.RoleAgent needs rack) and returns its
// text.
func (c *Coordinator) Token(role, rack string) string {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	tr, err := c.Admin.CreateToken(ctx, wire.TokenRequest{Role: role, Rack: rack})
	if err != nil {
		c.t.Fatalf("coordtest: create a %s token: %v", role, err)
	}
	return strings.TrimSpace(tr.Token)
}

// Client returns a client with a new token of role (and rack for agents).
func (c *Coordinator) Client(role, rack string) *client.Client {
	c.t.Helper()
	return c.client(c.Token(role, rack))
}

// AgentClient returns a client with a new agent token for rack: what a
// rack agent is given.
func (c *Coordinator) AgentClient(rack string) *client.Client {
	c.t.Helper()
	return c.Client(wire.RoleAgent, rack)
}

func (c *Coordinator) client(tok string) *client.Client {
	c.t.Helper()
	// A short retry of 503 and failover: a test fails in seconds instead
	// of waiting out the default 30 s.
	cl, err := client.New(client.Config{Coordinator: c.URL, Token: tok, RetryFor: 5 * time.Second})
	if err != nil {
		c.t.Fatalf("coordtest: client: %v", err)
	}
	return cl
}

// Apply creates or updates a host, failing the test on error.
func (c *Coordinator) Apply(h *wire.Host) {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	if _, _, err := c.Admin.ApplyHost(ctx, h); err != nil {
		c.t.Fatalf("coordtest: apply %s: %v", h.Name, err)
	}
}

// Host reads a host, failing the test on error.
func (c *Coordinator) Host(name string) *wire.Host {
	c.t.Helper()
	h, err := c.getHost(name)
	if err != nil {
		c.t.Fatalf("coordtest: get %s: %v", name, err)
	}
	return h
}

func (c *Coordinator) getHost(name string) (*wire.Host, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Admin.GetHost(ctx, name)
}

// WaitHost waits up to timeout for cond(host) to hold (return nil) and
// returns the host as it then was; it fails the test with cond's last
// answer when it does not.
func (c *Coordinator) WaitHost(name string, timeout time.Duration, what string, cond func(h *wire.Host) error) *wire.Host {
	c.t.Helper()
	var last *wire.Host
	testenv.Eventually(c.t, timeout, name+" "+what, func() (err error) {
		if last, err = c.getHost(name); err != nil {
			return err
		}
		return cond(last)
	})
	return last
}

// Lease reads the rack's lease as the coordinator sees it (nil when the
// rack has none).
func (c *Coordinator) Lease(rack string) *wire.Lease {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	l, err := c.Admin.GetLease(ctx, rack)
	if client.IsNotFound(err) {
		return nil
	}
	if err != nil {
		c.t.Fatalf("coordtest: lease of %s: %v", rack, err)
	}
	return l
}

// ctx bounds one admin call.
func (c *Coordinator) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
