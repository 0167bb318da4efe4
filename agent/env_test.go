package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// env is one real setup (testkit/rig): a rackfence-coordinator
// process, a rackfence-bmcsim process, and the agents a test starts.
type env struct {
	t     testing.TB
	dir   string
	url   string
	admin *client.Client
	c     *rig.Coordinator
	s     *rig.Sim
	// coord and sim are the processes (coord changes when a test restarts
	// the coordinator with restartCoordinator).
	coord *testenv.Process
	sim   *testenv.Process
}

type envOpts struct {
	bmcs    int
	latency time.Duration
	// simArgs are more rackfence-bmcsim flags.
	simArgs []string
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir()}
	e.c = rig.StartCoordinator(t, e.dir, rig.CoordOpts{})
	e.url, e.admin, e.coord = e.c.URL, e.c.Admin, e.c.Proc
	if o.bmcs > 0 {
		e.s = rig.StartSim(t, e.dir, o.bmcs, o.latency, o.simArgs...)
		e.sim = e.s.Proc
	}
	return e
}

// restartCoordinator starts the coordinator again on its data dir and ports.
func (e *env) restartCoordinator() {
	e.c.Start()
	e.coord = e.c.Proc
}

// adminTokenFile is the coordinator's admin token file.
func (e *env) adminTokenFile() string { return filepath.Join(e.c.Dir, "data", "admin.token") }

func ctx(t testing.TB) context.Context { return rig.Ctx(t) }

// startAgent runs rackfence-agent for rack with test-friendly timings: a
// 5 s lease (short takeovers, yet room for slow renewals on a loaded
// 2-core machine under -race) and a 1 s retry of transient failures.
func (e *env) startAgent(rack, id string, extra ...string) *testenv.Process {
	e.t.Helper()
	return e.c.StartAgent(rack, id, append([]string{"--transient-retry", "1s"}, extra...)...)
}

// bmcAddress is the BMC address of simulator index i.
func (e *env) bmcAddress(i int) string { return e.s.Address(i) }

// hostSpec is a host on rack with BMC i of the simulator.
func (e *env) hostSpec(name, rack string, i int) *wire.Host { return e.s.Host(name, rack, i) }

func (e *env) apply(h *wire.Host) { e.t.Helper(); e.c.Apply(h) }

func (e *env) host(name string) *wire.Host { e.t.Helper(); return e.c.Host(name) }

// waitHost waits until cond(host) is nil.
func (e *env) waitHost(name string, timeout time.Duration, what string, cond func(h *wire.Host) error) *wire.Host {
	e.t.Helper()
	return e.c.WaitHost(name, timeout, what, cond)
}

func stateIs(prov, op string) func(h *wire.Host) error { return rig.StateIs(prov, op) }

// simState reads /sim/state of BMC i.
func (e *env) simState(i int) (bmcsim.State, error) { return e.s.State(i) }

// simFault sets the fault mode of BMC i.
func (e *env) simFault(i int, mode string) { e.t.Helper(); e.s.Fault(i, mode) }

// auditLines returns the simulator's audit lines for BMC i.
func (e *env) auditLines(i int) []bmcsim.AuditLine { e.t.Helper(); return e.s.AuditLines(i) }

// scrape reads the agent's /metrics at addr and returns the value of the
// sample whose line starts with prefix (name plus labels), or -1.
func scrape(t testing.TB, addr, prefix string) float64 {
	t.Helper()
	v, err := tryScrape(addr, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tryScrape is scrape for a /metrics that may not be served yet.
func tryScrape(addr, prefix string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1, fmt.Errorf("scrape %s: %v", addr, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, prefix+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, prefix)), 64)
			if err == nil {
				return v, nil
			}
		}
	}
	return -1, nil
}

// agentToken creates an agent token for rack and writes it to a file.
func (e *env) agentToken(rack string) string {
	e.t.Helper()
	return e.c.Token(wire.RoleAgent, rack, "agent-"+rack+".token")
}
