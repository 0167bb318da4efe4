// Package rig starts rackfence's real processes for process-level tests:
// coordinators (one per tier, and members that join one), a
// rackfence-bmcsim, and rack agents, with the helpers tests use to drive
// and observe them. Everything is a real binary on loopback; nothing is
// faked. For an in-process coordinator, use testkit/coordtest.
package rig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Ctx returns a context bounded by a generous deadline, cancelled at cleanup.
func Ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// Coordinator is one rackfence-coordinator process: by default the single
// member of its own cluster (a tier), or a member that joined another
// (CoordOpts.Join).
type Coordinator struct {
	T    testing.TB
	Tier string
	Dir  string
	URL  string
	// CAFile is the tier's CA certificate (DATA/tls/ca.crt); "" when
	// the coordinator runs --insecure-plaintext.
	CAFile string
	// TokenFile is the cluster's bootstrap admin token (DATA/admin.token
	// of the member that bootstrapped it).
	TokenFile string
	// Admin is a client of this member with the admin token.
	Admin *client.Client
	// NodeID is its --node-id.
	NodeID string
	Proc   *testenv.Process
	args   []string
}

// CoordOpts configure StartCoordinator.
type CoordOpts struct {
	Tier string // --tier (default "default")
	// Peers maps peer tier names to their API URLs; PeerTokens to token
	// files (which may be written after the start: they are read per call).
	Peers      map[string]string
	PeerTokens map[string]string
	// HTTPPort fixes the API port (0 = a free one), so a test can name this
	// tier's URL to another tier before starting it.
	HTTPPort int
	// Insecure starts it with --insecure-plaintext (tests of plaintext
	// only: everything else runs the secure default, TLS).
	Insecure bool
	// NodeID is --node-id (default TIER-1).
	NodeID string
	// IP is the loopback address it listens on (default 127.0.0.1; a
	// cluster spread over 127.0.0.1, .2 and .3 looks like three hosts).
	IP string
	// Join starts a member that joins Join's cluster (--join with Join's
	// admin token) instead of bootstrapping a new one; it needs a NodeID,
	// and Tier defaults to Join's. A joiner writes no admin token: Admin
	// uses Join's. StartCoordinator returns once it serves, maybe before
	// the leader has added it (wait for GET /v1/cluster/members).
	Join *Coordinator
	// NoCredentials leaves the credentials empty; by default StartCoordinator
	// sets "bmc" = admin/password, which rig's hosts and agents use.
	NoCredentials bool
	// Args are extra flags.
	Args []string
}

// StartCoordinator starts a coordinator in dir (its data dir is DIR/data)
// and waits until it serves; a new cluster's member also until it leads
// and accepts an authenticated write (credentials "bmc" = admin/password
// are set unless NoCredentials). It skips under -short, like every starter
// of a real process.
func StartCoordinator(t testing.TB, dir string, o CoordOpts) *Coordinator {
	t.Helper()
	if o.Join != nil && o.Tier == "" {
		o.Tier = o.Join.Tier
	}
	if o.Join != nil && o.NodeID == "" {
		t.Fatal("rig: a joining coordinator needs CoordOpts.NodeID (TIER-1 is the bootstrapped member's)")
	}
	if o.Tier == "" {
		o.Tier = "default"
	}
	if o.NodeID == "" {
		o.NodeID = o.Tier + "-1"
	}
	if o.IP == "" {
		o.IP = "127.0.0.1"
	}
	c := &Coordinator{T: t, Tier: o.Tier, NodeID: o.NodeID, Dir: dir, TokenFile: filepath.Join(dir, "data", "admin.token")}
	hp := o.HTTPPort
	if hp == 0 {
		hp = testenv.FreePort(t, o.IP)
	}
	rp := testenv.FreePort(t, o.IP)
	scheme := "https"
	if o.Insecure {
		scheme = "http"
	} else {
		c.CAFile = filepath.Join(dir, "data", "tls", "ca.crt")
	}
	if o.Join != nil {
		// One cluster, one CA and one admin token: the joiner's own copy of
		// the CA appears only once it has joined.
		c.CAFile, c.TokenFile = o.Join.CAFile, o.Join.TokenFile
	}
	c.URL = fmt.Sprintf("%s://%s:%d", scheme, o.IP, hp)
	c.args = []string{"--data-dir", filepath.Join(dir, "data"), "--http-addr", fmt.Sprintf("%s:%d", o.IP, hp),
		"--raft-addr", fmt.Sprintf("%s:%d", o.IP, rp), "--node-id", o.NodeID, "--tier", o.Tier}
	if o.Join != nil {
		c.args = append(c.args, "--join", o.Join.URL, "--join-token-file", o.Join.TokenFile)
	}
	for n, u := range o.Peers {
		c.args = append(c.args, "--peer-tier", n+"="+u)
	}
	for n, f := range o.PeerTokens {
		c.args = append(c.args, "--peer-token-file", n+"="+f)
	}
	if o.Insecure {
		c.args = append(c.args, "--insecure-plaintext")
	}
	c.args = append(c.args, o.Args...)
	c.Start()
	tok, err := client.ReadTokenFile(c.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	c.Admin, err = client.New(client.Config{Coordinator: c.URL, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	if o.Join != nil {
		return c
	}
	testenv.Eventually(t, 60*time.Second, o.Tier+" leading and accepting the admin token", func() error {
		if o.NoCredentials {
			st, err := c.Admin.Status(Ctx(t))
			if err == nil && st.State != "leader" {
				err = fmt.Errorf("state %s", st.State)
			}
			return err
		}
		return c.Admin.SetCredentials(Ctx(t), "bmc", wire.Credentials{Username: "admin", Password: "password"})
	})
	return c
}

// Start (re)starts the process on the same data dir and ports and waits
// for /v1/health.
func (c *Coordinator) Start() {
	t := c.T
	t.Helper()
	c.Proc = testenv.Start(t, "coordinator "+c.NodeID, testenv.Binary(t, "rackfence-coordinator"), nil, c.args...)
	testenv.Eventually(t, 60*time.Second, "coordinator "+c.NodeID+" serving", func() error {
		if c.Proc.Exited() {
			t.Fatalf("coordinator %s exited:\n%s", c.NodeID, c.Proc.Output())
		}
		if _, err := os.Stat(c.TokenFile); err != nil {
			return err
		}
		resp, err := testenv.HTTPClient(c.CAFile).Get(c.URL + "/v1/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("health %d", resp.StatusCode)
		}
		return nil
	})
}

// Token creates a token of role (and rack for agents) and writes it to a
// file in the coordinator's directory, returning the path.
func (c *Coordinator) Token(role, rack, file string) string {
	c.T.Helper()
	tr, err := c.Admin.CreateToken(Ctx(c.T), wire.TokenRequest{Role: role, Rack: rack})
	if err != nil {
		c.T.Fatal(err)
	}
	p := filepath.Join(c.Dir, file)
	if err := os.WriteFile(p, []byte(tr.Token+"\n"), 0o600); err != nil {
		c.T.Fatal(err)
	}
	return p
}

// StartAgent runs rackfence-agent for rack against this coordinator with
// a new agent token, test-friendly timings (a 5 s lease), debug logs and a
// guard audit file in the coordinator's directory; extra are more flags.
func (c *Coordinator) StartAgent(rack, id string, extra ...string) *testenv.Process {
	c.T.Helper()
	return StartAgent(c.T, AgentOpts{Coordinator: c.URL, TokenFile: c.Token(wire.RoleAgent, rack, "agent-"+id+".token"),
		Rack: rack, ID: id, LogLevel: "debug", AuditFile: filepath.Join(c.Dir, "guard-"+id+".jsonl"), Args: extra})
}

// Apply creates or updates a host.
func (c *Coordinator) Apply(h *wire.Host) {
	c.T.Helper()
	if _, _, err := c.Admin.ApplyHost(Ctx(c.T), h); err != nil {
		c.T.Fatalf("apply %s in %s: %v", h.Name, c.Tier, err)
	}
}

// Host reads a host, failing the test on error.
func (c *Coordinator) Host(name string) *wire.Host {
	c.T.Helper()
	h, err := c.Admin.GetHost(Ctx(c.T), name)
	if err != nil {
		c.T.Fatalf("get %s in %s: %v", name, c.Tier, err)
	}
	return h
}

// WaitHost waits until cond(host) is nil.
func (c *Coordinator) WaitHost(name string, timeout time.Duration, what string, cond func(h *wire.Host) error) *wire.Host {
	c.T.Helper()
	var last *wire.Host
	testenv.Eventually(c.T, timeout, c.Tier+"/"+name+" "+what, func() error {
		h, err := c.Admin.GetHost(Ctx(c.T), name)
		if err != nil {
			return err
		}
		last = h
		return cond(h)
	})
	return last
}

// StateIs is a WaitHost condition: provisioning state prov and, when op is
// not empty, operational status op.
func StateIs(prov, op string) func(h *wire.Host) error {
	return func(h *wire.Host) error {
		if h.Status == nil {
			return fmt.Errorf("no status yet")
		}
		if h.Status.ProvisioningState != prov || (op != "" && h.Status.OperationalStatus != op) {
			return fmt.Errorf("state %s/%s (error %q %q, count %d), want %s/%s", h.Status.ProvisioningState,
				h.Status.OperationalStatus, h.Status.ErrorType, h.Status.ErrorMessage, h.Status.ErrorCount, prov, op)
		}
		return nil
	}
}

var listening = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)-`)

// Sim is a running rackfence-bmcsim.
type Sim struct {
	T     testing.TB
	Base  int
	N     int
	Audit string
	Proc  *testenv.Process
}

// StartSim starts n simulated BMCs (user admin / password password) with an
// audit file in dir; extra are more rackfence-bmcsim flags.
func StartSim(t testing.TB, dir string, n int, latency time.Duration, extra ...string) *Sim {
	t.Helper()
	s := &Sim{T: t, N: n, Audit: filepath.Join(dir, "bmc-audit.jsonl")}
	args := []string{"--hosts", strconv.Itoa(n), "--base-port", "0", "--audit", s.Audit}
	if latency > 0 {
		args = append(args, "--latency", latency.String())
	}
	args = append(args, extra...)
	s.Proc = testenv.Start(t, "bmcsim", testenv.Binary(t, "rackfence-bmcsim"), nil, args...)
	testenv.Eventually(t, 60*time.Second, "bmcsim serving", func() error {
		if s.Proc.Exited() {
			t.Fatalf("bmcsim exited:\n%s", s.Proc.Output())
		}
		m := listening.FindStringSubmatch(s.Proc.Output())
		if m == nil {
			return fmt.Errorf("no listening line yet")
		}
		s.Base, _ = strconv.Atoi(m[1])
		_, err := s.State(n - 1)
		return err
	})
	return s
}

// Address is the BMC address of simulator index i.
func (s *Sim) Address(i int) string {
	return fmt.Sprintf("redfish+http://127.0.0.1:%d/redfish/v1/Systems/1", s.Base+i)
}

// MAC is the boot MAC of simulator index i.
func (s *Sim) MAC(i int) string { return fmt.Sprintf("52:54:00:00:%02x:%02x", i>>8, i&0xff) }

// Host is a host spec on rack using BMC i, credentials "bmc".
func (s *Sim) Host(name, rack string, i int) *wire.Host {
	return &wire.Host{Name: name, Rack: rack, Online: true,
		BMC: wire.BMC{Address: s.Address(i), Credentials: "bmc"}, BootMACAddress: s.MAC(i)}
}
