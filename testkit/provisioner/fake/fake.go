// Package fake is an in-memory provisioner for in-process tests of the rack
// agent, as metal3's baremetal-operator has pkg/provisioner/fixture. It
// implements provisioner.Provisioner with no BMC and no Ironic behind it:
// each host has a power state and a provisioning ID in memory.
//
// What makes it a fixture rather than a stub:
//
//   - Every mutating call goes through the agent's guard, exactly as the
//     direct and Ironic provisioners do, so lease loss (ErrFenced), blocked
//     (detached) hosts and the wait for an in-flight call behave as in
//     production. Only PowerState, a read, is unguarded.
//   - Every call is recorded (host, operation, the epoch the guard checked,
//     the error, refused or not, in order) for assertions, and Wait blocks
//     until a matching call is recorded, so a test waits on an event, not
//     on a sleep.
//   - A test can make a host's operation fail with an error class
//     (Fail), answer InProgress a number of times (InProgress), or stop
//     inside the guard until the test releases it (Hold: an in-flight call,
//     to test detach and lease loss during a call).
//   - Two agents of one rack (a holder and a standby) can share one fake
//     back end, each through its own guard (Sibling), as they share the
//     rack's BMCs: the record then shows whether their mutations overlap.
package fake

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
)

// Op names a provisioner operation in the record (and in the guard's audit,
// prefixed "fake.").
type Op string

// Operations, one per provisioner.Provisioner method (SetPower and
// SetMaintenance give two each).
const (
	OpRegister       Op = "register"
	OpInspect        Op = "inspect"
	OpProvide        Op = "provide"
	OpProvision      Op = "provision"
	OpDeprovision    Op = "deprovision"
	OpAdopt          Op = "adopt"
	OpDetach         Op = "detach"
	OpDelete         Op = "delete"
	OpMaintenanceOn  Op = "maintenance-on"
	OpMaintenanceOff Op = "maintenance-off"
	OpPowerOn        Op = "power-on"
	OpPowerOff       Op = "power-off"
	OpPowerState     Op = "power-state"
	OpSoftPowerOff   Op = "soft-power-off"
)

// Mutating reports whether op goes through the guard: every operation but
// the power read.
func (op Op) Mutating() bool { return op != OpPowerState }

// DefaultMutationTimeout is the timeout the guard checks the lease against
// for each mutating call: the agent's default at the default 10 s lease TTL
// (fence.MutationTimeout). Tests with a shorter TTL set a shorter one
// (Config.MutationTimeout), or the guard refuses every call.
var DefaultMutationTimeout = fence.DefaultMutationTimeout

// Config configures a Provisioner.
type Config struct {
	// Guard is the agent's mutation guard (required): the same one the
	// agent blocks and unblocks hosts on.
	Guard *guard.Guard
	// Agent names the agent using this Provisioner in the record (Call.Agent).
	Agent string
	// MutationTimeout is each mutating call's timeout as given to the
	// guard (DefaultMutationTimeout when zero).
	MutationTimeout time.Duration
}

// Call is one recorded call.
type Call struct {
	// Seq numbers the calls of a Provisioner from 1, in the order they
	// ended (a held call is numbered when it returns).
	Seq   int
	Agent string // Config.Agent of the Provisioner called
	Host  string
	Op    Op
	// Epoch is the lease epoch the guard checked and put in the call's
	// context (0 for the unguarded power read and for refused calls).
	Epoch uint64
	// Refused is true when the guard refused the call: it never reached
	// the back end.
	Refused bool
	// Err is what the call returned (nil on success).
	Err error
	// Start and End bracket the call (End is when it returned).
	Start, End time.Time
}

func (c Call) String() string {
	s := fmt.Sprintf("#%d %s: %s %s epoch=%d", c.Seq, c.Agent, c.Host, c.Op, c.Epoch)
	if c.Refused {
		s += " refused"
	}
	if c.Err != nil {
		s += ": " + c.Err.Error()
	}
	return s
}

// Provisioner is the fake. Create it with New (and Sibling for a second
// agent on the same hosts); it is safe for concurrent use.
type Provisioner struct {
	cfg Config
	*backend
}

// backend is the hosts, the faults and the record Siblings share.
type backend struct {
	mu      sync.Mutex
	calls   []Call
	changed chan struct{} // closed and replaced on every recorded call
	hosts   map[string]*hostState
	faults  map[key]*fault
	holds   map[key]*Gate
}

type key struct {
	host string
	op   Op
}

type hostState struct {
	power bool
	id    string
}

type fault struct {
	n          int // remaining; < 0: until cleared
	err        error
	inProgress bool
}

var _ provisioner.Provisioner = (*Provisioner)(nil)

// New returns a fake provisioner whose hosts are all powered off and
// unknown.
func New(cfg Config) *Provisioner {
	return (&Provisioner{backend: &backend{changed: make(chan struct{}),
		hosts: map[string]*hostState{}, faults: map[key]*fault{}, holds: map[key]*Gate{}}}).Sibling(cfg)
}

// Sibling returns a Provisioner on the same hosts, faults, holds and record
// going through cfg.Guard: another agent of the same rack.
func (p *Provisioner) Sibling(cfg Config) *Provisioner {
	if cfg.MutationTimeout <= 0 {
		cfg.MutationTimeout = DefaultMutationTimeout
	}
	return &Provisioner{cfg: cfg, backend: p.backend}
}

// Fail makes host's next n calls of op fail with an error wrapping class
// (errclass.ErrTransient, ErrAuth, ErrFailed, ErrNotFound,
// ErrUnsupported); n < 0 fails every call until Clear. The failure happens
// inside the guard: a refused call is refused, not failed.
func (p *backend) Fail(host string, op Op, n int, class error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[key{host, op}] = &fault{n: n, err: class}
}

// InProgress makes host's next n calls of op answer InProgress (started,
// not finished: the agent calls again later), as Ironic does while it
// deploys or cleans.
func (p *backend) InProgress(host string, op Op, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[key{host, op}] = &fault{n: n, inProgress: true}
}

// Clear removes host's failures and InProgress answers of op.
func (p *backend) Clear(host string, op Op) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.faults, key{host, op})
}

// Gate holds one call in flight until the test releases it.
type Gate struct {
	entered  chan struct{}
	release  chan struct{}
	done     chan struct{}
	relOnce  sync.Once
	returned Call
}

// Hold makes host's next call of op stop inside the guard (after the guard
// let it through, while it counts as in flight) until the gate is released
// or the call's context ends (the guard cancels it when the lease is lost
// or its timeout passes). The held call then proceeds as usual.
func (p *backend) Hold(host string, op Op) *Gate {
	g := &Gate{entered: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds[key{host, op}] = g
	return g
}

// Entered is closed once the held call is in flight.
func (g *Gate) Entered() <-chan struct{} { return g.entered }

// Release lets the held call go on (idempotent).
func (g *Gate) Release() { g.relOnce.Do(func() { close(g.release) }) }

// Done is closed once the held call returned.
func (g *Gate) Done() <-chan struct{} { return g.done }

// Call is the held call's record (valid once Done is closed).
func (g *Gate) Call() Call { <-g.done; return g.returned }

// Calls returns every recorded call in order.
func (p *backend) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// CallsOf returns host's recorded calls in order.
func (p *backend) CallsOf(host string) []Call {
	var out []Call
	for _, c := range p.Calls() {
		if c.Host == host {
			out = append(out, c)
		}
	}
	return out
}

// Wait blocks until a recorded call matches (searching the calls after
// seq: Wait(ctx, 0, m) also finds calls recorded before it was called)
// and returns the first one, or ctx's error.
func (p *backend) Wait(ctx context.Context, seq int, match func(Call) bool) (Call, error) {
	for {
		p.mu.Lock()
		for _, c := range p.calls[min(seq, len(p.calls)):] {
			if match(c) {
				p.mu.Unlock()
				return c, nil
			}
		}
		seq = len(p.calls)
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Call{}, fmt.Errorf("no matching provisioner call: %w", context.Cause(ctx))
		}
	}
}

// Power reports host's power state as the fake holds it.
func (p *backend) Power(host string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.host(host).power
}

// Is matches calls of host and op, succeeded or not (for Wait).
func Is(host string, op Op) func(Call) bool {
	return func(c Call) bool { return c.Host == host && c.Op == op }
}

// OK matches successful calls of host and op (for Wait).
func OK(host string, op Op) func(Call) bool {
	return func(c Call) bool { return c.Host == host && c.Op == op && c.Err == nil }
}

func (p *backend) host(name string) *hostState {
	h, ok := p.hosts[name]
	if !ok {
		h = &hostState{}
		p.hosts[name] = h
	}
	return h
}

// call runs op on host: through the guard when it mutates, with the
// configured fault, hold or effect.
func (p *Provisioner) call(ctx context.Context, host string, op Op, effect func(h *hostState) provisioner.Result) (provisioner.Result, error) {
	start := time.Now()
	var (
		res   provisioner.Result
		epoch uint64
		ran   bool
		gate  *Gate
	)
	body := func(ctx context.Context) error {
		ran = true
		epoch, _ = guard.EpochFromContext(ctx)
		gate = p.enterHold(host, op)
		var err error
		res, err = p.run(ctx, gate, host, op, effect)
		return err
	}
	var err error
	if op.Mutating() {
		err = p.cfg.Guard.Do(ctx, host, "fake."+string(op), p.cfg.MutationTimeout, body)
	} else {
		err = body(ctx)
	}
	c := Call{Agent: p.cfg.Agent, Host: host, Op: op, Epoch: epoch, Refused: !ran, Err: err, Start: start, End: time.Now()}
	p.mu.Lock()
	c.Seq = len(p.calls) + 1
	p.calls = append(p.calls, c)
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	if gate != nil {
		gate.returned = c
		close(gate.done)
	}
	if err != nil {
		return provisioner.Result{}, err
	}
	return res, nil
}

// enterHold takes host's Hold for op, if any, and marks it entered: one
// call per Hold, so a second call of the same op runs unheld.
func (p *backend) enterHold(host string, op Op) *Gate {
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.holds[key{host, op}]
	if !ok {
		return nil
	}
	delete(p.holds, key{host, op})
	close(g.entered)
	return g
}

// run is the back end: the hold g (nil: none), the fault, then the effect.
func (p *backend) run(ctx context.Context, g *Gate, host string, op Op, effect func(h *hostState) provisioner.Result) (provisioner.Result, error) {
	if g != nil {
		select {
		case <-g.release:
		case <-ctx.Done():
			return provisioner.Result{}, fmt.Errorf("%w: fake %s %s: %v", errclass.ErrTransient, op, host, context.Cause(ctx))
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.faults[key{host, op}]; ok && f.n != 0 {
		if f.n > 0 {
			f.n--
		}
		if f.inProgress {
			return provisioner.Result{InProgress: true, ProvisioningID: p.host(host).id,
				Message: fmt.Sprintf("fake: %s of %s in progress", op, host)}, nil
		}
		return provisioner.Result{}, fmt.Errorf("%w: fake: %s of %s told to fail", f.err, op, host)
	}
	return effect(p.host(host)), nil
}

func boolp(b bool) *bool { return &b }

// The fake back end's effects, shared by the methods.

// know gives the host a provisioning ID and answers its power.
func (p *Provisioner) know(ctx context.Context, h provisioner.Host, op Op) (provisioner.Result, error) {
	return p.call(ctx, h.Name, op, func(s *hostState) provisioner.Result {
		if s.id == "" {
			s.id = "fake-" + h.Name
		}
		return provisioner.Result{ProvisioningID: s.id, PoweredOn: boolp(s.power), Message: "fake: " + string(op)}
	})
}

// power sets the host's power.
func (p *Provisioner) power(ctx context.Context, h provisioner.Host, op Op, on bool) (provisioner.Result, error) {
	return p.call(ctx, h.Name, op, func(s *hostState) provisioner.Result {
		s.power = on
		return provisioner.Result{ProvisioningID: s.id, PoweredOn: boolp(on), Message: "fake: " + string(op)}
	})
}

// forget drops the host's provisioning ID (no power change).
func (p *Provisioner) forget(ctx context.Context, h provisioner.Host, op Op) (provisioner.Result, error) {
	return p.call(ctx, h.Name, op, func(s *hostState) provisioner.Result {
		s.id = ""
		return provisioner.Result{Message: "fake: " + string(op)}
	})
}

// record changes nothing.
func (p *Provisioner) record(ctx context.Context, h provisioner.Host, op Op) (provisioner.Result, error) {
	return p.call(ctx, h.Name, op, func(s *hostState) provisioner.Result {
		return provisioner.Result{ProvisioningID: s.id, Message: "fake: " + string(op)}
	})
}

// Name is "fake".
func (p *Provisioner) Name() string { return "fake" }

// Register gives the host a provisioning ID and reads its power.
func (p *Provisioner) Register(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.know(ctx, h, OpRegister)
}

// Inspect answers hardware details naming the boot MAC.
func (p *Provisioner) Inspect(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.call(ctx, h.Name, OpInspect, func(s *hostState) provisioner.Result {
		hw := &wire.HardwareDetails{Manufacturer: "fake", CPUs: []wire.CPU{{Model: "fake", Cores: 4}}, MemoryMiB: 1024,
			NICs: []wire.NIC{{Name: "boot", MAC: strings.ToLower(h.BootMACAddress)}}}
		return provisioner.Result{ProvisioningID: s.id, HardwareDetails: hw, Message: "fake: inspected"}
	})
}

// Provide changes nothing.
func (p *Provisioner) Provide(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.record(ctx, h, OpProvide)
}

// Provision powers the host on (the image is not looked at).
func (p *Provisioner) Provision(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.power(ctx, h, OpProvision, true)
}

// Deprovision powers the host off.
func (p *Provisioner) Deprovision(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.power(ctx, h, OpDeprovision, false)
}

// Adopt gives the host a provisioning ID without a power change.
func (p *Provisioner) Adopt(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.know(ctx, h, OpAdopt)
}

// Detach forgets the host's provisioning ID (no power change).
func (p *Provisioner) Detach(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.forget(ctx, h, OpDetach)
}

// Delete forgets the host's provisioning ID.
func (p *Provisioner) Delete(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.forget(ctx, h, OpDelete)
}

// SetMaintenance changes nothing.
func (p *Provisioner) SetMaintenance(ctx context.Context, h provisioner.Host, on bool) (provisioner.Result, error) {
	if on {
		return p.record(ctx, h, OpMaintenanceOn)
	}
	return p.record(ctx, h, OpMaintenanceOff)
}

// SetPower powers the host on or off.
func (p *Provisioner) SetPower(ctx context.Context, h provisioner.Host, on bool) (provisioner.Result, error) {
	if on {
		return p.power(ctx, h, OpPowerOn, true)
	}
	return p.power(ctx, h, OpPowerOff, false)
}

// SoftPowerOff powers the host off at once (the fake OS always obeys).
func (p *Provisioner) SoftPowerOff(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.power(ctx, h, OpSoftPowerOff, false)
}

// PowerState reads the power (unguarded).
func (p *Provisioner) PowerState(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	return p.call(ctx, h.Name, OpPowerState, func(s *hostState) provisioner.Result {
		return provisioner.Result{ProvisioningID: s.id, PoweredOn: boolp(s.power)}
	})
}
