package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/provisioner/fake"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// The in-process layer: the real Agent (lease keeper, session, watch,
// queue, reconcile loop, guard) against a real coordinator running in the
// test process (testkit/coordtest) through the real shared/client, with
// the fixture provisioner (testkit/provisioner/fake) in place of BMCs. No
// process is started and nothing is built, so these run under go test
// -short in seconds. The process layer (e2e_test.go and its neighbours)
// runs the real binaries against bmcsim.

// *client.Client is the production Coordinator.
var _ Coordinator = (*client.Client)(nil)

// waitLong bounds every wait of the in-process tests: generous, as a
// loaded 2-core machine under -race can be slow, but each wait ends as soon
// as what it waits for is observed.
const waitLong = 60 * time.Second

// rackAgent is one in-process agent under test.
type rackAgent struct {
	t      *testing.T
	id     string
	a      *Agent
	holder *fence.Holder
	guard  *guard.Guard
	prov   *fake.Provisioner
	coord  *faultyCoordinator
	cancel context.CancelFunc
	done   chan error
}

// agentOpts tune startAgent; zero values take the test defaults.
type agentOpts struct {
	// ttl is the lease TTL (default 10 s, the production default: it
	// leaves the guard room for 4.5 s calls, which a test can hold).
	ttl time.Duration
	// refresh is the status refresh (default 1 s, so a refresh is a marker
	// a test can wait for).
	refresh time.Duration
	// grace is the shutdown grace (default 10 s).
	grace time.Duration
	// share makes the agent's provisioner a Sibling of this one (the same
	// hosts, as two agents of one rack share its BMCs).
	share *fake.Provisioner
	// tune, when set, changes the agent's Config before New (a test that
	// wraps the provisioner or shortens the error backoff).
	tune func(*Config)
}

// mutationTimeout is the guard's room for each fake call at ttl:
// (TTL − margin)/2, as the agent's --mutation-timeout default.

// startAgent runs an agent with id for rack against c (through an agent
// token for the rack and a faultyCoordinator that passes everything on
// until told otherwise). It stops at cleanup.
func startAgent(t *testing.T, c *coordtest.Coordinator, rack, id string, o agentOpts) *rackAgent {
	t.Helper()
	if o.ttl == 0 {
		o.ttl = 10 * time.Second
	}
	if o.refresh == 0 {
		o.refresh = time.Second
	}
	r := &rackAgent{t: t, id: id, holder: fence.NewHolder(nil), done: make(chan error, 1)}
	r.guard = guard.NewGuard(r.holder, nil)
	pc := fake.Config{Guard: r.guard, Agent: id, MutationTimeout: fence.MutationTimeout(o.ttl)}
	if o.share != nil {
		r.prov = o.share.Sibling(pc)
	} else {
		r.prov = fake.New(pc)
	}
	r.coord = newFaultyCoordinator(c.AgentClient(rack))
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("agent", id)
	}
	cfg := Config{Client: r.coord, Rack: rack, AgentID: id, Workers: 8, LeaseTTL: o.ttl,
		StatusRefresh: o.refresh, ShutdownGrace: o.grace, WatchTimeout: 5 * time.Second,
		Holder: r.holder, Guard: r.guard, Provisioner: r.prov, Logger: log}
	if o.tune != nil {
		o.tune(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- a.Run(ctx) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// newRack starts a coordinator and an agent "a1" for rack r1 in a parallel
// test and waits until the agent holds the lease.
func newRack(t *testing.T, o agentOpts) (*coordtest.Coordinator, *rackAgent, fence.Lease) {
	t.Helper()
	t.Parallel()
	c := coordtest.Start(t, coordtest.Options{})
	r := startAgent(t, c, "r1", "a1", o)
	return c, r, r.waitHeld()
}

// countOps counts the calls of op among calls.
func countOps(calls []fake.Call, op fake.Op) int {
	n := 0
	for _, c := range calls {
		if c.Op == op {
			n++
		}
	}
	return n
}

// stop cancels the agent and waits for Run to return (shutdown: grace,
// release).
func (r *rackAgent) stop() error {
	r.t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(waitLong):
		// Errorf: stop may run on another goroutine (stopAsync).
		r.t.Errorf("agent %s did not stop within %s", r.id, waitLong)
		return nil
	}
}

// waitHeld waits until the agent holds the rack lease and has applied its
// first watch answer, and returns the lease.
func (r *rackAgent) waitHeld() fence.Lease {
	r.t.Helper()
	var l fence.Lease
	testenv.Eventually(r.t, waitLong, r.id+" holding the lease", func() error {
		var ok bool
		if l, ok = r.holder.Valid(0); !ok || !r.a.Synced() {
			return fmt.Errorf("lease %+v valid=%v synced=%v", l, ok, r.a.Synced())
		}
		return nil
	})
	return l
}

// waitStandby waits until the agent stands by (another holds the rack).
func (r *rackAgent) waitStandby() {
	r.t.Helper()
	testenv.Eventually(r.t, waitLong, r.id+" standing by", func() error {
		if s := r.a.cfg.Metrics.lease.Load(); s != leaseStandby {
			return fmt.Errorf("lease state %d", s)
		}
		return nil
	})
}

// seen waits until the agent's session has applied a watch answer in
// which cond holds for host name.
func (r *rackAgent) seen(name, what string, cond func(h wire.Host) bool) {
	r.t.Helper()
	testenv.Eventually(r.t, waitLong, r.id+" seeing "+name+" "+what, func() error {
		s := r.a.cur.Load()
		if s == nil {
			return errors.New("no session")
		}
		ok := false
		s.store.with(name, func(e *hostEntry) { ok = cond(e.host) })
		if !ok {
			return errors.New("not yet")
		}
		return nil
	})
}

// seenGone waits until the agent's session no longer knows host name.
func (r *rackAgent) seenGone(name string) {
	r.t.Helper()
	testenv.Eventually(r.t, waitLong, r.id+" forgetting "+name, func() error {
		s := r.a.cur.Load()
		if s == nil {
			return errors.New("no session")
		}
		if s.store.with(name, func(*hostEntry) {}) {
			return errors.New("still known")
		}
		return nil
	})
}

// ctxT is a context for one test step.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	t.Cleanup(cancel)
	return ctx
}

// fakeHost is a managed host of rack (a BMC address the fake never dials,
// the coordtest credentials "bmc").
func fakeHost(name, rack string, i int) *wire.Host {
	return &wire.Host{Name: name, Rack: rack, Online: true,
		BMC:            wire.BMC{Address: fmt.Sprintf("redfish://192.0.2.%d", i+1), Credentials: "bmc"},
		BootMACAddress: fmt.Sprintf("02:00:00:00:00:%02x", i+1)}
}

// stateIs is a WaitHost condition on the provisioning and operational state.
func stateIs(prov, op string) func(h *wire.Host) error {
	return func(h *wire.Host) error {
		if h.Status == nil || h.Status.ProvisioningState != prov || h.Status.OperationalStatus != op {
			return fmt.Errorf("status %+v, want %s/%s", h.Status, prov, op)
		}
		return nil
	}
}

// epochIs is a WaitHost condition: the status was written under epoch.
func epochIs(epoch uint64) func(h *wire.Host) error {
	return func(h *wire.Host) error {
		if h.Status == nil || h.Status.Epoch != epoch {
			return fmt.Errorf("status %+v, want epoch %d", h.Status, epoch)
		}
		return nil
	}
}
