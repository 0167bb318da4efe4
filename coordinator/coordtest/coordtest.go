package coordtest

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	coordapi "github.com/rackfence/rackfence/coordinator/api"
	"github.com/rackfence/rackfence/coordinator/coordtest/member"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Options configure Start. The zero value is a good default.
type Options struct {
	// Tier is the cluster's tier name (default "default").
	Tier string
	// WatchTimeout is the longest a watch blocks (default 30s, the
	// server's default; a client's shorter ?timeout= is honoured).
	WatchTimeout time.Duration
	// Logger receives the coordinator's logs; nil discards them (or
	// writes them to stderr under go test -v).
	Logger *slog.Logger
}

// Coordinator is one in-process coordinator member, leader of its own
// single-member cluster. Start stops it at the test's cleanup.
type Coordinator struct {
	// URL is the API's base URL (http://127.0.0.1:PORT).
	URL string
	// Dir is the member's data directory.
	Dir string
	// Store is the member's state (for assertions a client cannot make).
	Store *coordinator.Store
	// Admin is a client with the bootstrap admin token.
	Admin *client.Client
	// Keys is the keyring that seals its credentials (a backup restore
	// needs it).
	Keys *seal.Keyring

	t testing.TB
	m *member.Member
}

// Start opens a new single-member coordinator in a temporary directory
// (coordtest/member), serves its API and waits until it leads and accepts
// an authenticated write (credentials "bmc" = admin/password are set, as
// rig.StartCoordinator does).
func Start(t testing.TB, o Options) *Coordinator {
	t.Helper()
	if o.Tier == "" {
		o.Tier = "default"
	}
	m := member.Open(t, member.Config{ID: o.Tier + "-1", Bootstrap: true, Logger: o.Logger})
	c := &Coordinator{t: t, m: m, URL: m.URL, Dir: m.Dir, Store: m.Store, Keys: m.Secrets.Get()}
	a := coordapi.New(coordapi.Config{Store: m.Store, Tier: o.Tier, Logger: m.Logger, Registry: m.Registry,
		WatchTimeout: o.WatchTimeout})
	m.Serve(a.Handler(), func() { a.Close() })
	m.WaitLeader(t)
	c.Admin = c.client(m.AdminToken(t))
	testenv.Eventually(t, 30*time.Second, "coordtest: the admin token accepted", func() error {
		ctx, cancel := c.ctx()
		defer cancel()
		return c.Admin.SetCredentials(ctx, "bmc", wire.Credentials{Username: "admin", Password: "password"})
	})
	return c
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
