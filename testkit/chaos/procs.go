package chaos

// This file is the only place that starts processes and builds API
// clients. The cluster runs the secure default (TLS): coordURL (https://),
// newClientURLs (a transport
// trusting the CA the admin token pins) and the health probe in waitHTTP
// (trusting c1's CA, copied to DIR/ca.crt) know about TLS; agents get tokens that pin
// the CA and obtain their certificates themselves.

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Ports every member and BMC listens on, inside its own namespace.
const (
	coordHTTPPort = 7480
	coordRaftPort = 7481
	bmcBasePort   = 9001
)

// Proc is one real process inside a node's namespace. Its output goes to
// LOGDIR/NAME.log, appended across restarts.
type Proc struct {
	Name string
	Node string
	net  *Net
	bin  string
	args []string
	logs string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	exit int // exit code of the last run (-1 for a signal), once done
}

// Start (re)starts the process with its arguments.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(p.logs, p.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "==== chaos: start %s at %s: %s %s\n", p.Name, time.Now().UTC().Format(time.RFC3339Nano), p.bin, strings.Join(p.args, " "))
	cmd := p.net.Command(p.Node, p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.exit = cmd.ProcessState.ExitCode()
		p.mu.Unlock()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// Running reports whether the process is started and has not exited.
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Exited waits up to d for the process to exit and returns its exit code
// (-1 when a signal ended it); ok is false when it is still running.
func (p *Proc) Exited(d time.Duration) (code int, ok bool) {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return 0, false
	}
	select {
	case <-done:
	case <-time.After(d):
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit, true
}

// Signal sends sig to the process (no-op when it is not running).
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	return p.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL and waits for the exit.
func (p *Proc) Kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Stop sends SIGCONT and SIGTERM, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Topology is the shape of a run's cluster.
type Topology struct {
	Coordinators int      // Raft members (3)
	Racks        []string // rack names; each gets an active and a standby agent and one bmcsim
	HostsPerRack int
	LeaseTTL     time.Duration // agents' --lease-ttl
	// DataFS, when set, puts each coordinator's data dir on a tmpfs of
	// this many bytes of its own (the storage faults need it: a disk that
	// fills, a data dir moved aside). Needs root, as the whole harness.
	DataFS int64
	// SimArgs are more rackfence-bmcsim flags (a --profile); AgentArgs
	// more rackfence-agent flags (RotationFlag).
	SimArgs   []string
	AgentArgs []string
}

// Nodes returns the namespace names of a topology: c1..cN, per rack
// RACKa, RACKb (agents) and RACKbmc, and cl (the operators' clients).
func (t Topology) Nodes() []string {
	var out []string
	for i := 1; i <= t.Coordinators; i++ {
		out = append(out, fmt.Sprintf("c%d", i))
	}
	for _, r := range t.Racks {
		out = append(out, r+"a", r+"b", r+"bmc")
	}
	return append(out, "cl")
}

// Agent is one agent slot of a rack (a = started first, b = standby).
type Agent struct {
	Rack string
	Slot string // "a" or "b"
	ID   string // current --agent-id
	gen  int
	Proc *Proc
}

// Cluster is every process of a run.
type Cluster struct {
	Dir    string
	Topo   Topology
	Net    *Net
	Coords []*Proc
	BMCs   map[string]*Proc
	Agents []*Agent
	// Observer reaches every member from the root namespace over the
	// bridge, a path no fault cuts: the harness's own reads.
	Observer *client.Client
	bin      string
	log      *slog.Logger
	admin    string // admin token
	tmu      sync.Mutex
	trs      []*http.Transport // closed by StopAll, so no socket keeps a namespace alive
	mounted  []string          // the members' tmpfs mount points (Topology.DataFS)
}

func (c *Cluster) coordURL(i int) string {
	return fmt.Sprintf("https://%s:%d", c.Net.Node(fmt.Sprintf("c%d", i+1)).IP, coordHTTPPort)
}

// URLs is every member's API URL, comma-separated.
func (c *Cluster) URLs() string {
	var u []string
	for i := range c.Coords {
		u = append(u, c.coordURL(i))
	}
	return strings.Join(u, ",")
}

// MemberIndex maps an API URL (as /v1/status names the leader) to a member.
func (c *Cluster) MemberIndex(url string) int {
	for i := range c.Coords {
		if strings.TrimRight(url, "/") == c.coordURL(i) {
			return i
		}
	}
	return -1
}

// fsDir is member i's tmpfs mount point (Topology.DataFS).
func (c *Cluster) fsDir(i int) string {
	return filepath.Join(c.Dir, "data", fmt.Sprintf("c%d-fs", i+1))
}

// DataDir is member i's data dir: DATA/cN, or DATA/cN-fs/data on its own
// tmpfs (Topology.DataFS).
func (c *Cluster) DataDir(i int) string {
	if c.Topo.DataFS > 0 {
		return filepath.Join(c.fsDir(i), "data")
	}
	return filepath.Join(c.Dir, "data", fmt.Sprintf("c%d", i+1))
}

func (c *Cluster) coordArgs(i int) []string {
	nd := c.Net.Node(fmt.Sprintf("c%d", i+1))
	args := []string{"--data-dir", c.DataDir(i), "--node-id", nd.Name,
		"--http-addr", fmt.Sprintf("%s:%d", nd.IP, coordHTTPPort), "--raft-addr", fmt.Sprintf("%s:%d", nd.IP, coordRaftPort),
		"--log-level", "info"}
	if c.Topo.DataFS > 0 {
		// A short log tail, so a snapshot compacts the log and a damaged
		// or missing snapshot matters (FaultDamagedRestart).
		args = append(args, "--raft-trailing-logs", "64")
	}
	if i > 0 {
		args = append(args, "--join", c.coordURL(0), "--join-token-file", c.adminTokenFile())
	}
	return args
}

// joinArgs are member i's arguments to join again with an empty data dir
// through member via (the runbook for a damaged data dir).
func (c *Cluster) joinArgs(i, via int) []string {
	args := c.coordArgs(i)
	if i == 0 {
		args = append(args, "--join", c.coordURL(via), "--join-token-file", c.adminTokenFile())
		return args
	}
	for k := range args {
		if args[k] == "--join" {
			args[k+1] = c.coordURL(via)
		}
	}
	return args
}

// adminTokenFile is c1's admin token, copied beside the run's data when
// c1 wrote it (c1's data dir may be moved aside later).
func (c *Cluster) adminTokenFile() string { return filepath.Join(c.Dir, "admin.token") }

// firstAdminTokenFile is where c1 writes the admin token at bootstrap.
func (c *Cluster) firstAdminTokenFile() string { return filepath.Join(c.DataDir(0), "admin.token") }

// caFile is the cluster CA the first member made at bootstrap (copied
// beside the run's data, as the admin token).
func (c *Cluster) caFile() string { return filepath.Join(c.Dir, "ca.crt") }

func (c *Cluster) agentArgs(a *Agent) []string {
	return append([]string{"--coordinator", c.URLs(), "--token-file", filepath.Join(c.Dir, "agent-"+a.Rack+".token"),
		"--rack", a.Rack, "--agent-id", a.ID, "--lease-ttl", c.Topo.LeaseTTL.String(), "--log-level", "debug",
		"--audit-file", filepath.Join(c.Dir, "guard-"+a.ID+".jsonl"),
		// Short retries, so hosts converge promptly after the final heal.
		"--error-backoff-base", "1s", "--transient-retry", "1s"}, c.Topo.AgentArgs...)
}

func (c *Cluster) proc(name, node, bin string, args []string) *Proc {
	return &Proc{Name: name, Node: node, net: c.Net, bin: filepath.Join(c.bin, bin), args: args, logs: filepath.Join(c.Dir, "logs")}
}

// newClient builds an API client whose connections are dialed from node's
// namespace ("" = the root namespace). timeout bounds each attempt and the
// failover retries.
func (c *Cluster) newClient(node, token string, timeout time.Duration) (*client.Client, error) {
	return c.newClientURLs(node, token, timeout, c.URLs())
}

// OperatorClientFirst is OperatorClient with member first tried first.
func (c *Cluster) OperatorClientFirst(node string, first int) (*client.Client, error) {
	urls := []string{c.coordURL(first)}
	for i := range c.Coords {
		if i != first {
			urls = append(urls, c.coordURL(i))
		}
	}
	return c.newClientURLs(node, c.admin, 3*time.Second, strings.Join(urls, ","))
}

func (c *Cluster) newClientURLs(node, token string, timeout time.Duration, urls string) (*client.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	c.tmu.Lock()
	c.trs = append(c.trs, tr)
	c.tmu.Unlock()
	if node != "" {
		tr.DialContext = c.Net.DialContextIn(node)
	} else {
		d := &net.Dialer{Timeout: timeout}
		tr.DialContext = d.DialContext
	}
	// The token pins the cluster CA (TLS is the default): trust it on this
	// transport itself, so StopAll closes the connections client.New
	// would otherwise open on a clone.
	secret, pin := wire.ParseToken(token)
	if pin != "" {
		cfg, err := pki.ClientTLS(nil, pin)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	// HTTP/1.1: each request in flight has its own connection, so a write
	// held by a cut link never holds up the next one (the history's
	// invoke/return model, and TestDelayedWrite's scenario). Agents speak
	// HTTP/2, with the client's ping health check.
	tr.ForceAttemptHTTP2 = false
	tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	return client.New(client.Config{Coordinator: urls, Token: secret, Timeout: timeout, RetryFor: timeout,
		HTTPClient: &http.Client{Transport: tr}, UserAgent: "rackfence-chaos"})
}

// OperatorClient is an admin client in node's namespace (which faults may
// cut), with short timeouts so a partition shows as an ambiguous result.
func (c *Cluster) OperatorClient(node string) (*client.Client, error) {
	return c.newClient(node, c.admin, 3*time.Second)
}

// StartCluster starts the coordinators (c1 bootstraps, the others join),
// one bmcsim per rack and the two agents of each rack, then waits for all
// of them. bin is the directory holding the binaries.
func StartCluster(ctx context.Context, dir, bin string, nw *Net, topo Topology, log *slog.Logger) (*Cluster, error) {
	c := &Cluster{Dir: dir, Topo: topo, Net: nw, BMCs: map[string]*Proc{}, bin: bin, log: log}
	for _, d := range []string{"logs", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if topo.DataFS > 0 {
		if err := c.mountDataFS(); err != nil {
			return c, err
		}
	}
	for i := 0; i < topo.Coordinators; i++ {
		c.Coords = append(c.Coords, c.proc(fmt.Sprintf("coordinator-c%d", i+1), fmt.Sprintf("c%d", i+1), "rackfence-coordinator", nil))
	}
	c.Coords[0].args = c.coordArgs(0)
	if err := c.Coords[0].Start(); err != nil {
		return nil, err
	}
	if err := waitFile(ctx, c.firstAdminTokenFile()); err != nil {
		return c, fmt.Errorf("c1 wrote no admin token: %w", err)
	}
	if err := waitFile(ctx, filepath.Join(c.DataDir(0), "tls", "ca.crt")); err != nil {
		return c, fmt.Errorf("c1 wrote no CA: %w", err)
	}
	for src, dst := range map[string]string{c.firstAdminTokenFile(): c.adminTokenFile(), filepath.Join(c.DataDir(0), "tls", "ca.crt"): c.caFile()} {
		b, err := os.ReadFile(src)
		if err != nil {
			return c, err
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return c, err
		}
	}
	tok, err := client.ReadTokenFile(c.adminTokenFile())
	if err != nil {
		return c, err
	}
	c.admin = tok
	if err := waitHTTP(ctx, c.coordURL(0)+"/v1/health", c.caFile()); err != nil {
		return c, err
	}
	for i := 1; i < topo.Coordinators; i++ {
		c.Coords[i].args = c.coordArgs(i)
		if err := c.Coords[i].Start(); err != nil {
			return c, err
		}
	}
	if c.Observer, err = c.newClient("", tok, 10*time.Second); err != nil {
		return c, err
	}
	if err := until(ctx, "a cluster of "+fmt.Sprint(topo.Coordinators), func() error {
		st, err := c.Observer.Status(ctx)
		if err != nil {
			return err
		}
		if len(st.Members) != topo.Coordinators {
			return fmt.Errorf("%d members", len(st.Members))
		}
		for i := range c.Coords {
			if err := waitHTTP(ctx, c.coordURL(i)+"/v1/health", c.caFile()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return c, err
	}
	if err := c.Observer.SetCredentials(ctx, "bmc", wire.Credentials{Username: "admin", Password: "password"}); err != nil {
		return c, err
	}
	for _, r := range topo.Racks {
		tr, err := c.Observer.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: r})
		if err != nil {
			return c, err
		}
		if err := os.WriteFile(filepath.Join(dir, "agent-"+r+".token"), []byte(tr.Token+"\n"), 0o600); err != nil {
			return c, err
		}
		nd := nw.Node(r + "bmc")
		p := c.proc("bmcsim-"+r, nd.Name, "rackfence-bmcsim", append([]string{"--hosts", fmt.Sprint(topo.HostsPerRack),
			"--host", nd.IP, "--base-port", fmt.Sprint(bmcBasePort), "--audit", c.AuditFile(r)}, topo.SimArgs...))
		c.BMCs[r] = p
		if err := p.Start(); err != nil {
			return c, err
		}
		if err := waitHTTP(ctx, fmt.Sprintf("http://%s:%d/sim/state", nd.IP, bmcBasePort+topo.HostsPerRack-1)); err != nil {
			return c, err
		}
	}
	return c, nil
}

// StartAgents starts both agents of every rack, the active one first.
func (c *Cluster) StartAgents() error {
	for _, r := range c.Topo.Racks {
		for _, slot := range []string{"a", "b"} {
			a := &Agent{Rack: r, Slot: slot, gen: 1}
			a.ID = fmt.Sprintf("%s%s-1", r, slot)
			a.Proc = c.proc("agent-"+a.ID, r+slot, "rackfence-agent", nil)
			a.Proc.args = c.agentArgs(a)
			c.Agents = append(c.Agents, a)
			if err := a.Proc.Start(); err != nil {
				return err
			}
			c.log.Info("agent started", "agent", a.ID, "node", a.Rack+a.Slot)
			time.Sleep(time.Second) // slot a asks first and becomes the holder
		}
	}
	return nil
}

// RestartAgentNewID kills an agent and starts it again in its namespace
// under a new --agent-id (a replaced machine, a changed hostname).
func (c *Cluster) RestartAgentNewID(a *Agent) error {
	a.Proc.Kill()
	a.gen++
	a.ID = fmt.Sprintf("%s%s-%d", a.Rack, a.Slot, a.gen)
	a.Proc = c.proc("agent-"+a.ID, a.Rack+a.Slot, "rackfence-agent", nil)
	a.Proc.args = c.agentArgs(a)
	c.log.Info("agent restarted under a new id", "agent", a.ID, "node", a.Rack+a.Slot)
	return a.Proc.Start()
}

// AuditFile is the bmcsim audit file of a rack.
func (c *Cluster) AuditFile(rack string) string {
	return filepath.Join(c.Dir, "bmc-audit-"+rack+".jsonl")
}

// BMCAddress is the Redfish address of BMC i of a rack.
func (c *Cluster) BMCAddress(rack string, i int) string {
	return fmt.Sprintf("redfish+http://%s:%d/redfish/v1/Systems/1", c.Net.Node(rack+"bmc").IP, bmcBasePort+i)
}

// SimKnobsURL is bmcsim's /sim/knobs of BMC i of a rack.
func (c *Cluster) SimKnobsURL(rack string, i int) string {
	return fmt.Sprintf("http://%s:%d/sim/knobs", c.Net.Node(rack+"bmc").IP, bmcBasePort+i)
}

// SimStateURL is bmcsim's /sim/state of BMC i of a rack.
func (c *Cluster) SimStateURL(rack string, i int) string {
	return fmt.Sprintf("http://%s:%d/sim/state", c.Net.Node(rack+"bmc").IP, bmcBasePort+i)
}

// StopAll stops every process (SIGCONT + SIGTERM, SIGKILL after 5 s).
func (c *Cluster) StopAll() {
	var ps []*Proc
	for _, a := range c.Agents {
		ps = append(ps, a.Proc)
	}
	for _, p := range c.BMCs {
		ps = append(ps, p)
	}
	ps = append(ps, c.Coords...)
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func(p *Proc) { defer wg.Done(); p.Stop(5 * time.Second) }(p)
	}
	wg.Wait()
	c.tmu.Lock()
	defer c.tmu.Unlock()
	for _, tr := range c.trs {
		tr.CloseIdleConnections()
	}
	c.unmountDataFS()
}

// probe reads the BMCs' plain-HTTP simulator state (/sim/state).
var probe = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// waitHTTP polls url until it answers 200. For https:// it trusts the CA
// in caFile (the first member's DATA/tls/ca.crt, written before it
// listens), read at each try.
func waitHTTP(ctx context.Context, url string, caFile ...string) error {
	return until(ctx, url, func() error {
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
		if len(caFile) > 0 {
			b, err := os.ReadFile(caFile[0])
			if err != nil {
				return err
			}
			if tr.TLSClientConfig, err = pki.ClientTLS(b, ""); err != nil {
				return err
			}
		}
		resp, err := (&http.Client{Timeout: 2 * time.Second, Transport: tr}).Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: %d", url, resp.StatusCode)
		}
		return nil
	})
}

func waitFile(ctx context.Context, path string) error {
	return until(ctx, path, func() error { _, err := os.Stat(path); return err })
}

// until polls cond every 100 ms until it returns nil or ctx ends (then
// the last error, naming what).
func until(ctx context.Context, what string, cond func() error) error {
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
