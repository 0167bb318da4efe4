package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner/fake"
	"github.com/rackfence/rackfence/coordinator/coordtest"
	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/testenv"
)

// The in-process layer: the real Agent (lease keeper, session, watch,
// queue, reconcile loop, guard) against a real coordinator running in the
// test process (coordinator/coordtest) through the real shared/client, with
// the fixture provisioner (agent/provisioner/fake) in place of BMCs. No
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
}

// mutationTimeout is the guard's room for each fake call at ttl:
// (TTL − margin)/2, as the agent's --mutation-timeout default.
func mutationTimeout(ttl time.Duration) time.Duration { return (ttl - fence.Margin(ttl)) / 2 }

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
	pc := fake.Config{Guard: r.guard, Agent: id, MutationTimeout: mutationTimeout(o.ttl)}
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
	a, err := New(Config{Client: r.coord, Rack: rack, AgentID: id, Workers: 8, LeaseTTL: o.ttl,
		StatusRefresh: o.refresh, ShutdownGrace: o.grace, WatchTimeout: 5 * time.Second,
		Holder: r.holder, Guard: r.guard, Provisioner: r.prov, Logger: log})
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
		r.t.Fatalf("agent %s did not stop within %s", r.id, waitLong)
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
func (r *rackAgent) seen(name, what string, cond func(h api.Host) bool) {
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
func fakeHost(name, rack string, i int) *api.Host {
	return &api.Host{Name: name, Rack: rack, Online: true,
		BMC:            api.BMC{Address: fmt.Sprintf("redfish://192.0.2.%d", i+1), Credentials: "bmc"},
		BootMACAddress: fmt.Sprintf("02:00:00:00:00:%02x", i+1)}
}

// stateIs is a WaitHost condition on the provisioning and operational state.
func stateIs(prov, op string) func(h *api.Host) error {
	return func(h *api.Host) error {
		if h.Status == nil || h.Status.ProvisioningState != prov || h.Status.OperationalStatus != op {
			return fmt.Errorf("status %+v, want %s/%s", h.Status, prov, op)
		}
		return nil
	}
}

// epochIs is a WaitHost condition: the status was written under epoch.
func epochIs(epoch uint64) func(h *api.Host) error {
	return func(h *api.Host) error {
		if h.Status == nil || h.Status.Epoch != epoch {
			return fmt.Errorf("status %+v, want epoch %d", h.Status, epoch)
		}
		return nil
	}
}

// faultyCoordinator passes every call to a real coordinator's client and
// injects, when a test asks, the faults a real coordinator cannot produce
// at a chosen moment: this agent cut off from every member, renewals
// failing (unreachable) or refused (stale_epoch), a status write refused
// as stale, a watch answer that is a reset leaving hosts out. It is the agent-side fake of Coordinator; it
// fakes nothing else, so every other answer is the real coordinator's. It
// also counts renewals and status writes for the tests' markers.
type faultyCoordinator struct {
	Coordinator
	mu sync.Mutex
	// cut: every call answers errUnreachable.
	cut bool
	// renewFaults are the errors the next renewals answer, in order.
	renewFaults []error
	renewFailed int
	renewOK     int
	// staleWrite: the next status write of this host is refused as stale.
	staleWrite string
	// resetWithout: the next watch answer is a reset without these hosts.
	resetWithout []string
	writes       map[string][]api.StatusReport
}

func newFaultyCoordinator(c Coordinator) *faultyCoordinator {
	return &faultyCoordinator{Coordinator: c, writes: map[string][]api.StatusReport{}}
}

// errUnreachable is what the client answers when no member does.
var errUnreachable = &client.UnreachableError{URLs: []string{"http://faulty"}, Err: errors.New("injected: connection refused")}

// errStale is the coordinator's refusal of an epoch that is not current.
var errStale = &client.Error{Status: 409, Code: api.CodeStaleEpoch, Message: "injected: epoch is not current"}

// cutOff makes every call answer errUnreachable (a partition between this
// agent and every member), or ends that.
func (f *faultyCoordinator) cutOff(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut = on
}

// isCut reports whether the agent is cut off.
func (f *faultyCoordinator) isCut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cut
}

func (f *faultyCoordinator) AcquireLease(ctx context.Context, rack string, r api.LeaseRequest) (*api.Lease, error) {
	if f.isCut() {
		return nil, errUnreachable
	}
	return f.Coordinator.AcquireLease(ctx, rack, r)
}

func (f *faultyCoordinator) ReleaseLease(ctx context.Context, rack string, r api.LeaseRequest) error {
	if f.isCut() {
		return errUnreachable
	}
	return f.Coordinator.ReleaseLease(ctx, rack, r)
}

func (f *faultyCoordinator) RevealCredentials(ctx context.Context, name string) (*api.Credentials, error) {
	if f.isCut() {
		return nil, errUnreachable
	}
	return f.Coordinator.RevealCredentials(ctx, name)
}

// failRenewals makes the next renewals answer errs, in order.
func (f *faultyCoordinator) failRenewals(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renewFaults = append(f.renewFaults, errs...)
}

// renewals returns how many renewals failed by injection and how many
// succeeded.
func (f *faultyCoordinator) renewals() (failed, ok int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.renewFailed, f.renewOK
}

func (f *faultyCoordinator) RenewLease(ctx context.Context, rack string, r api.LeaseRequest) (*api.Lease, error) {
	f.mu.Lock()
	if f.cut {
		f.renewFailed++
		f.mu.Unlock()
		return nil, errUnreachable
	}
	if len(f.renewFaults) > 0 {
		err := f.renewFaults[0]
		f.renewFaults = f.renewFaults[1:]
		f.renewFailed++
		f.mu.Unlock()
		return nil, err
	}
	f.mu.Unlock()
	l, err := f.Coordinator.RenewLease(ctx, rack, r)
	if err == nil {
		f.mu.Lock()
		f.renewOK++
		f.mu.Unlock()
	}
	return l, err
}

// refuseNextWrite makes the next status write of host answer stale_epoch.
func (f *faultyCoordinator) refuseNextWrite(host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.staleWrite = host
}

// written returns the status reports of host the coordinator accepted.
func (f *faultyCoordinator) written(host string) []api.StatusReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.StatusReport(nil), f.writes[host]...)
}

func (f *faultyCoordinator) ReportStatus(ctx context.Context, name string, r api.StatusReport) error {
	f.mu.Lock()
	if f.cut {
		f.mu.Unlock()
		return errUnreachable
	}
	if f.staleWrite == name {
		f.staleWrite = ""
		f.mu.Unlock()
		return errStale
	}
	f.mu.Unlock()
	err := f.Coordinator.ReportStatus(ctx, name, r)
	if err == nil {
		f.mu.Lock()
		f.writes[name] = append(f.writes[name], r)
		f.mu.Unlock()
	}
	return err
}

// resetWithoutNext makes the next watch answer a reset (as when the agent
// asked from an index older than the coordinator keeps deletions for)
// listing every host of the rack but hosts.
func (f *faultyCoordinator) resetWithoutNext(hosts ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resetWithout = hosts
}

func (f *faultyCoordinator) Watch(ctx context.Context, rack string, index uint64, timeout time.Duration) (*api.WatchResponse, error) {
	f.mu.Lock()
	cut, drop := f.cut, f.resetWithout
	f.resetWithout = nil
	f.mu.Unlock()
	if cut {
		return nil, errUnreachable
	}
	if drop == nil {
		return f.Coordinator.Watch(ctx, rack, index, timeout)
	}
	// Index 0 answers every host of the rack at once.
	resp, err := f.Coordinator.Watch(ctx, rack, 0, timeout)
	if err != nil {
		return nil, err
	}
	out := *resp
	out.Reset, out.Hosts, out.Deleted = true, nil, nil
	for _, h := range resp.Hosts {
		keep := true
		for _, d := range drop {
			keep = keep && h.Name != d
		}
		if keep {
			out.Hosts = append(out.Hosts, h)
		}
	}
	return &out, nil
}
