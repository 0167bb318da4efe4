package rig

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

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
	// HTTPPort and RaftPort are its API and Raft ports on its IP.
	HTTPPort, RaftPort int
	// Bin is the binary Start runs (CoordOpts.Bin); a test may swap it
	// between restarts (a rolling upgrade).
	Bin string
	// Args are the flags Start passes: the ones NewCoordinator built from
	// CoordOpts, then CoordOpts.Args. A test may change them between
	// restarts.
	Args []string
	Proc *testenv.Process
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
	// Bin is the coordinator binary (default the project's
	// rackfence-coordinator, of testenv.Binary; a rolling upgrade passes
	// an older release's).
	Bin string
	// DataDir is --data-dir (default DIR/data).
	DataDir string
	// RaftPort fixes the Raft port (0 = a free one): a data dir copied
	// from another member started on that member's addresses.
	RaftPort int
}

// StartCoordinator starts a coordinator in dir (its data dir is DIR/data)
// and waits until it serves; a new cluster's member also until it leads
// and accepts an authenticated write (credentials "bmc" = admin/password
// are set unless NoCredentials). It skips under -short, like every starter
// of a real process.
func StartCoordinator(t testing.TB, dir string, o CoordOpts) *Coordinator {
	t.Helper()
	c := NewCoordinator(t, dir, o)
	c.Start()
	if o.Join != nil {
		return c
	}
	c.WaitWritable(o.NoCredentials)
	return c
}

// NewCoordinator lays out a coordinator in dir as StartCoordinator does
// (ports, data dir, flags, CA and token files) and starts nothing: a test
// that expects a start to be refused calls Launch, one that restarts a
// data dir calls Start.
func NewCoordinator(t testing.TB, dir string, o CoordOpts) *Coordinator {
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
	if o.DataDir == "" {
		o.DataDir = filepath.Join(dir, "data")
	}
	if o.Bin == "" {
		o.Bin = testenv.Binary(t, "rackfence-coordinator")
	}
	c := &Coordinator{T: t, Tier: o.Tier, NodeID: o.NodeID, Dir: dir, TokenFile: filepath.Join(o.DataDir, "admin.token"),
		HTTPPort: o.HTTPPort, RaftPort: o.RaftPort, Bin: o.Bin}
	if c.HTTPPort == 0 {
		c.HTTPPort = testenv.FreePort(t, o.IP)
	}
	if c.RaftPort == 0 {
		c.RaftPort = testenv.FreePort(t, o.IP)
	}
	scheme := "https"
	if o.Insecure {
		scheme = "http"
	} else {
		c.CAFile = filepath.Join(o.DataDir, "tls", "ca.crt")
	}
	if o.Join != nil {
		// One cluster, one CA and one admin token: the joiner's own copy of
		// the CA appears only once it has joined.
		c.CAFile, c.TokenFile = o.Join.CAFile, o.Join.TokenFile
	}
	c.URL = fmt.Sprintf("%s://%s:%d", scheme, o.IP, c.HTTPPort)
	c.Args = []string{"--data-dir", o.DataDir, "--http-addr", fmt.Sprintf("%s:%d", o.IP, c.HTTPPort),
		"--raft-addr", fmt.Sprintf("%s:%d", o.IP, c.RaftPort), "--node-id", o.NodeID, "--tier", o.Tier}
	if o.Join != nil {
		c.Args = append(c.Args, "--join", o.Join.URL, "--join-token-file", o.Join.TokenFile)
	}
	for n, u := range o.Peers {
		c.Args = append(c.Args, "--peer-tier", n+"="+u)
	}
	for n, f := range o.PeerTokens {
		c.Args = append(c.Args, "--peer-token-file", n+"="+f)
	}
	if o.Insecure {
		c.Args = append(c.Args, "--insecure-plaintext")
	}
	c.Args = append(c.Args, o.Args...)
	return c
}

// WaitWritable waits until the coordinator leads and takes an
// authenticated write: credentials "bmc" = admin/password, or with
// noCredentials a status read that names it leader.
func (c *Coordinator) WaitWritable(noCredentials bool) {
	t := c.T
	t.Helper()
	testenv.Eventually(t, 60*time.Second, c.Tier+" leading and accepting the admin token", func() error {
		if noCredentials {
			st, err := c.Admin.Status(Ctx(t))
			if err == nil && st.State != "leader" {
				err = fmt.Errorf("state %s", st.State)
			}
			return err
		}
		return c.Admin.SetCredentials(Ctx(t), "bmc", wire.Credentials{Username: "admin", Password: "password"})
	})
}

// Launch starts the process (Bin with Args, then extra) without waiting
// for anything: a start the test expects to be refused waits for its exit.
func (c *Coordinator) Launch(extra ...string) *testenv.Process {
	c.T.Helper()
	c.Proc = testenv.Start(c.T, "coordinator "+c.NodeID, c.Bin, nil, append(append([]string{}, c.Args...), extra...)...)
	return c.Proc
}

// Start (re)starts the process on the same data dir and ports (extra are
// flags for this start only), waits for /v1/health, and the first time
// builds Admin from the token file.
func (c *Coordinator) Start(extra ...string) {
	t := c.T
	t.Helper()
	c.Launch(extra...)
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
	if c.Admin != nil {
		return
	}
	tok, err := client.ReadTokenFile(c.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin, err = client.New(client.Config{Coordinator: c.URL, Token: tok}); err != nil {
		t.Fatal(err)
	}
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
