package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/bmcsim"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/testenv"
)

// env is one real setup: a rackfence-coordinator process, a rackfence-bmcsim
// process, and the agents a test starts.
type env struct {
	t        testing.TB
	dir      string
	url      string
	admin    *client.Client
	simBase  int
	simHosts int
	audit    string
	coord    *testenv.Process
	// coordArgs restart the coordinator on the same data dir and ports.
	coordArgs []string
	sim       *testenv.Process
}

type envOpts struct {
	bmcs    int
	latency time.Duration
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), simHosts: o.bmcs}
	coordBin := testenv.Binary(t, "rackfence-coordinator")
	httpPort := testenv.FreePort(t, "127.0.0.1")
	raftPort := testenv.FreePort(t, "127.0.0.1")
	data := filepath.Join(e.dir, "coord")
	e.url = fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	e.coordArgs = []string{"--data-dir", data, "--http-addr", fmt.Sprintf("127.0.0.1:%d", httpPort),
		"--raft-addr", fmt.Sprintf("127.0.0.1:%d", raftPort), "--node-id", "n1"}
	e.coord = testenv.Start(t, "coordinator", coordBin, nil, e.coordArgs...)
	tokPath := filepath.Join(data, "admin.token")
	testenv.Eventually(t, 60*time.Second, "the coordinator's admin token and health", func() error {
		if e.coord.Exited() {
			t.Fatalf("coordinator exited:\n%s", e.coord.Output())
		}
		if _, err := os.Stat(tokPath); err != nil {
			return err
		}
		resp, err := http.Get(e.url + "/v1/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("health %d", resp.StatusCode)
		}
		return nil
	})
	tok, err := client.ReadTokenFile(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	e.admin, err = client.New(client.Config{Coordinator: e.url, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	// The token file may appear a moment before the cluster knows the
	// token: wait for an authenticated write to go through.
	testenv.Eventually(t, 60*time.Second, "the admin token accepted", func() error {
		return e.admin.SetCredentials(ctx(t), "bmc", api.Credentials{Username: "admin", Password: "password"})
	})
	if o.bmcs > 0 {
		simBin := testenv.Binary(t, "rackfence-bmcsim")
		e.audit = filepath.Join(e.dir, "bmc-audit.jsonl")
		// --base-port 0: the simulator picks a free range and says where.
		args := []string{"--hosts", fmt.Sprint(o.bmcs), "--base-port", "0", "--audit", e.audit}
		if o.latency > 0 {
			args = append(args, "--latency", o.latency.String())
		}
		e.sim = testenv.Start(t, "bmcsim", simBin, nil, args...)
		listening := regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)-`)
		testenv.Eventually(t, 60*time.Second, "bmcsim serving", func() error {
			if e.sim.Exited() {
				t.Fatalf("bmcsim exited:\n%s", e.sim.Output())
			}
			m := listening.FindStringSubmatch(e.sim.Output())
			if m == nil {
				return fmt.Errorf("no listening line yet")
			}
			e.simBase, _ = strconv.Atoi(m[1])
			_, err := e.simState(o.bmcs - 1)
			return err
		})
	}
	return e
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// agentToken creates an agent token for rack and writes it to a file.
func (e *env) agentToken(rack string) string {
	e.t.Helper()
	tr, err := e.admin.CreateToken(ctx(e.t), api.TokenRequest{Role: api.RoleAgent, Rack: rack})
	if err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(e.dir, "agent-"+rack+".token")
	if err := os.WriteFile(p, []byte(tr.Token+"\n"), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// startAgent runs rackfence-agent for rack with test-friendly timings: a
// 5 s lease (short takeovers, yet room for slow renewals on a loaded
// 2-core machine under -race).
func (e *env) startAgent(rack, id string, extra ...string) *testenv.Process {
	e.t.Helper()
	bin := testenv.Binary(e.t, "rackfence-agent")
	args := []string{"--coordinator", e.url, "--token-file", e.agentToken(rack), "--rack", rack,
		"--agent-id", id, "--lease-ttl", "5s", "--transient-retry", "1s", "--log-level", "debug",
		"--audit-file", filepath.Join(e.dir, "guard-"+id+".jsonl")}
	args = append(args, extra...)
	return testenv.Start(e.t, "agent "+id, bin, nil, args...)
}

// bmcAddress is the BMC address of simulator index i.
func (e *env) bmcAddress(i int) string {
	return fmt.Sprintf("redfish+http://127.0.0.1:%d/redfish/v1/Systems/1", e.simBase+i)
}

// hostSpec is a host on rack with BMC i of the simulator.
func (e *env) hostSpec(name, rack string, i int) *api.Host {
	return &api.Host{Name: name, Rack: rack, Online: true,
		BMC:            api.BMC{Address: e.bmcAddress(i), Credentials: "bmc"},
		BootMACAddress: fmt.Sprintf("52:54:00:00:%02x:%02x", i>>8, i&0xff)}
}

func (e *env) apply(h *api.Host) {
	e.t.Helper()
	if _, _, err := e.admin.ApplyHost(ctx(e.t), h); err != nil {
		e.t.Fatalf("apply %s: %v", h.Name, err)
	}
}

func (e *env) host(name string) *api.Host {
	e.t.Helper()
	h, err := e.admin.GetHost(ctx(e.t), name)
	if err != nil {
		e.t.Fatalf("get %s: %v", name, err)
	}
	return h
}

// waitHost waits until cond(host) is nil.
func (e *env) waitHost(name string, timeout time.Duration, what string, cond func(h *api.Host) error) *api.Host {
	e.t.Helper()
	var last *api.Host
	testenv.Eventually(e.t, timeout, name+" "+what, func() error {
		h, err := e.admin.GetHost(ctx(e.t), name)
		if err != nil {
			return err
		}
		last = h
		return cond(h)
	})
	return last
}

func stateIs(prov, op string) func(h *api.Host) error {
	return func(h *api.Host) error {
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

// simState reads /sim/state of BMC i.
func (e *env) simState(i int) (bmcsim.State, error) {
	var st bmcsim.State
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/sim/state", e.simBase+i))
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return st, fmt.Errorf("sim state %d", resp.StatusCode)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// simFault sets the fault mode of BMC i.
func (e *env) simFault(i int, mode string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("http://127.0.0.1:%d/sim/fault", e.simBase+i),
		strings.NewReader(`{"mode":"`+mode+`"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		e.t.Fatalf("sim fault %s on %d: %d", mode, i, resp.StatusCode)
	}
}

// auditLines returns the simulator's audit lines for BMC i.
func (e *env) auditLines(i int) []bmcsim.AuditLine {
	e.t.Helper()
	f, err := os.Open(e.audit)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []bmcsim.AuditLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l bmcsim.AuditLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Port == e.simBase+i {
			out = append(out, l)
		}
	}
	return out
}

// scrape reads the agent's /metrics at addr and returns the value of the
// sample whose line starts with prefix (name plus labels), or -1.
func scrape(t testing.TB, addr, prefix string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape %s: %v", addr, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, prefix+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, prefix)), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}
