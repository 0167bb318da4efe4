package hoststate

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// The model-based test drives Step with thousands of random sequences of
// spec edits, intents, clock jumps, agent restarts and provisioner outcomes
// (successes, in-progress, transient, fenced, failures, auth errors, lost
// nodes), and checks the invariants after every step. The random numbers
// are drawn here, in the test, from fixed seeds: a failure names its seed
// and step and reproduces exactly.

var modelSeeds = []uint64{1, 2, 3, 42, 20261122, 20261128}

const (
	modelSequences = 700
	modelSteps     = 80
)

type model struct {
	t      *testing.T
	rng    *rand.Rand
	where  string
	h      wire.Host
	now    time.Time
	last   *Outcome
	d      Decision
	idx    uint64
	cfg    Config
	states map[string]int
	ops    map[string]int
	rules  map[string]int
}

func TestModel(t *testing.T) {
	states, ops, rules := map[string]int{}, map[string]int{}, map[string]int{}
	steps := 0
	for _, seed := range modelSeeds {
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		for seq := 0; seq < modelSequences; seq++ {
			m := &model{t: t, rng: rng, now: t0, idx: 1000, states: states, ops: ops, rules: rules}
			steps += m.sequence(seed, seq)
			if t.Failed() {
				return
			}
		}
	}
	t.Logf("%d steps over %d sequences", steps, len(modelSeeds)*modelSequences)
	for _, s := range wire.ProvisioningStates {
		if states[s] == 0 {
			t.Errorf("provisioning state %q never reached", s)
		}
	}
	// delayed is not used by this state machine (no provisioning limits).
	for _, s := range []string{wire.OpOK, wire.OpDiscovered, wire.OpError, wire.OpDetached, wire.OpMaintenance, wire.OpRemoving, wire.OpAwaitingHandoff} {
		if ops[s] == 0 {
			t.Errorf("operational status %q never reached", s)
		}
	}
	for _, w := range table {
		if rules[w.name] == 0 {
			t.Errorf("rule %s never fired", w.name)
		}
	}
}

func (m *model) sequence(seed uint64, seq int) int {
	m.h = m.randomHost()
	m.cfg = Config{}
	if m.chance(0.3) {
		// Short backoffs and a single deletion try: reach the give-up rows.
		m.cfg = Config{BackoffBase: time.Second, MaxDeleteTries: 1 + m.rng.IntN(2)}
	}
	m.where = fmt.Sprintf("seed %d sequence %d step 0", seed, seq)
	if !m.step() {
		return 1
	}
	for i := 1; i < modelSteps; i++ {
		m.where = fmt.Sprintf("seed %d sequence %d step %d", seed, seq, i)
		m.perturb()
		if !m.step() {
			return i + 1
		}
	}
	return modelSteps + m.settle(seed, seq)
}

// settle checks liveness: left alone with every action succeeding, the host
// comes to rest (no action, nothing scheduled) or is removed, in a bounded
// number of steps. It catches rows that undo each other.
func (m *model) settle(seed uint64, seq int) int {
	const limit = 40
	for i := 0; i < limit; i++ {
		m.where = fmt.Sprintf("seed %d sequence %d settle step %d", seed, seq, i)
		switch {
		case m.d.Remove:
			return i
		case m.d.Action != ActionNone:
			m.last = &Outcome{Action: m.d.Action, PoweredOn: boolp(m.d.Action == ActionPowerOn || m.d.Action == ActionProvision),
				ResetNeeded: m.d.Action == ActionApplyBIOS}
			if m.d.Action == ActionFirmwareUpdate {
				m.h.Task = nil // ended by the agent before it reports success
			}
		case m.d.RequeueAfter > 0:
			m.now = m.now.Add(m.d.RequeueAfter)
			m.last = nil
			// A power action held for a firmware task outside servicing
			// waits for the record to end (the flash ended).
			m.h.Task = nil
		default:
			return i
		}
		if !m.step() {
			return i + 1
		}
	}
	m.fail("does not come to rest in %d steps: %s", limit, m.d)
	return limit
}

var allActions = []Action{
	ActionRegister, ActionInspect, ActionProvide, ActionProvision, ActionDeprovision, ActionAdopt,
	ActionDetach, ActionDelete, ActionMaintenanceOn, ActionMaintenanceOff, ActionPowerOn, ActionPowerOff,
	ActionSoftPowerOff, ActionReinspect, ActionFirmwareUpdate, ActionBuildRAID, ActionApplyBIOS, ActionVerifyBIOS, ActionErase,
}

func (m *model) chance(p float64) bool { return m.rng.Float64() < p }

func (m *model) nextIdx() uint64 { m.idx++; return m.idx }

func (m *model) randomBMC() wire.BMC {
	switch m.rng.IntN(8) {
	case 0:
		return wire.BMC{}
	case 1:
		return wire.BMC{Address: "ipmi://10.0.0.9:623"}
	case 2:
		return wire.BMC{Credentials: "c"}
	case 3:
		return wire.BMC{Address: "gopher://x", Credentials: "c"}
	}
	return fullHost().BMC
}

func (m *model) randomHost() wire.Host {
	h := fullHost()
	h.BMC = m.randomBMC()
	h.ExternallyProvisioned = m.chance(0.3)
	h.Online = m.chance(0.6)
	if m.chance(0.4) {
		h.Image = &wire.Image{URL: "http://img/a"}
	}
	if m.chance(0.15) {
		h.Consumer = "c"
	}
	if m.chance(0.1) {
		h.Handoff = &wire.Handoff{SourceTier: "A", DetachIndex: m.nextIdx(), Confirmed: m.chance(0.3)}
		h.Status = &wire.HostStatus{
			ProvisioningState: wire.StateProvisioned, HardwareDetails: &wire.HardwareDetails{Model: "m"},
			PoweredOn: true, Extra: map[string]string{keyNode: nodeReady},
		}
	} else if m.chance(0.1) {
		h.Status = &wire.HostStatus{HardwareDetails: &wire.HardwareDetails{Model: "m"}}
	} else if m.chance(0.1) {
		// Any persisted status (a restored record, an older agent): Step
		// must cope with it too.
		st := wire.HostStatus{ProvisioningState: wire.ProvisioningStates[m.rng.IntN(len(wire.ProvisioningStates))]}
		if m.chance(0.5) {
			st.HardwareDetails = &wire.HardwareDetails{Model: "m"}
		}
		st.Extra = map[string]string{keyNode: []string{nodeNone, nodeEnrolled, nodeReady}[m.rng.IntN(3)]}
		h.Status = &st
		// Deletion cannot be withdrawn: a deletion state implies it.
		h.DeletionRequested = deletionState(st.ProvisioningState)
	}
	return h
}

// intents returns a fresh copy of the intents, so no earlier Input shares it.
func (m *model) intents() *wire.Intents {
	var in wire.Intents
	if m.h.Intents != nil {
		in = *m.h.Intents
	}
	m.h.Intents = &in
	return &in
}

// perturb changes the world a little before the next step.
func (m *model) perturb() {
	m.last = nil
	switch k := m.rng.IntN(100); {
	case k < 2: // a stray outcome of some other action
		m.last = m.outcome(allActions[m.rng.IntN(len(allActions))])
	case k < 50: // the agent runs the pending action
		if m.d.Action != ActionNone {
			m.last = m.outcome(m.d.Action)
		} else {
			m.advance()
		}
	case k < 62: // spec edit
		m.editSpec()
		m.h.SpecIndex++
	case k < 82: // intents and deletion
		m.editIntents()
	case k < 95: // time passes
		m.advance()
	default: // agent restart: the pending action is forgotten
	}
}

func (m *model) advance() {
	steps := []time.Duration{time.Second, 15 * time.Second, 5 * time.Minute, time.Hour, 10 * time.Hour}
	m.now = m.now.Add(steps[m.rng.IntN(len(steps))])
}

func (m *model) editSpec() {
	switch m.rng.IntN(12) {
	case 11: // disks erased after a deprovision, or not
		if m.h.AutomatedCleaningMode == wire.CleaningMetadata {
			m.h.AutomatedCleaningMode = wire.CleaningDisabled
		} else {
			m.h.AutomatedCleaningMode = wire.CleaningMetadata
		}
	case 9: // BIOS settings asked for, changed or withdrawn
		if m.h.BIOS != nil && m.chance(0.4) {
			m.h.BIOS = nil
		} else {
			m.h.BIOS = &wire.BIOSSpec{Settings: map[string]string{"ProcTurboMode": fmt.Sprint(m.nextIdx())}}
		}
	case 10: // RAID volumes asked for or withdrawn
		if m.h.RAID != nil {
			m.h.RAID = nil
		} else {
			m.h.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1"}}}
		}
	case 6: // a firmware version asked for, changed or withdrawn
		if m.h.Firmware != nil && m.chance(0.4) {
			m.h.Firmware = nil
		} else {
			m.h.Firmware = []wire.FirmwareComponent{{Component: "bmc", URL: "http://fw/bmc.bin", Version: fmt.Sprint(m.nextIdx())}}
		}
	case 7:
		if m.h.UpdatePolicy == nil {
			m.h.UpdatePolicy = &wire.UpdatePolicy{FirmwareUpdates: wire.UpdatePolicyOnReboot}
			if m.chance(0.5) {
				m.h.UpdatePolicy.FirmwareSettings = wire.UpdatePolicyOnReboot
			}
		} else {
			m.h.UpdatePolicy = nil
		}
	case 8: // the coordinator's firmware task record appears or goes
		if m.h.Task == nil && m.h.Status != nil && (m.h.Status.ProvisioningState == wire.StateServicing || m.h.Status.ProvisioningState == wire.StatePreparing) {
			m.h.Task = &wire.BMCTask{Kind: wire.BMCTaskFirmware, Component: "bmc", TaskURI: "/redfish/v1/TaskService/Tasks/" + fmt.Sprint(m.nextIdx()), Epoch: 1}
		} else {
			m.h.Task = nil
		}
	case 0:
		m.h.BMC = m.randomBMC()
	case 1:
		m.h.Online = !m.h.Online
	case 2:
		if m.h.Image == nil {
			m.h.Image = &wire.Image{URL: "http://img/b"}
		} else if m.chance(0.5) {
			m.h.Image = nil
		} else {
			m.h.Image = &wire.Image{URL: "http://img/c"}
		}
	case 3:
		m.h.ExternallyProvisioned = !m.h.ExternallyProvisioned
	case 4:
		if m.h.Consumer == "" {
			m.h.Consumer = "c"
		} else {
			m.h.Consumer = ""
		}
	case 5:
		m.h.BMC = fullHost().BMC
	}
}

func (m *model) editIntents() {
	switch m.rng.IntN(12) {
	case 9: // reboot, hard or soft
		mode := wire.RebootHard
		if m.chance(0.5) {
			mode = wire.RebootSoft
		}
		m.intents().Reboot = &wire.Intent{CreatedIndex: m.nextIdx(), Mode: mode}
	case 10: // a power-off hold set or withdrawn
		in := m.intents()
		key := []string{"a", "b"}[m.rng.IntN(2)]
		holds := map[string]*wire.Intent{}
		for k, v := range in.PowerOff {
			holds[k] = v
		}
		if holds[key] != nil {
			delete(holds, key)
		} else {
			mode := wire.RebootHard
			if m.chance(0.5) {
				mode = wire.RebootSoft
			}
			holds[key] = &wire.Intent{CreatedIndex: m.nextIdx(), Mode: mode, Requester: key}
		}
		in.PowerOff = holds
	case 11:
		if m.chance(0.3) {
			m.intents().Service = &wire.Intent{CreatedIndex: m.nextIdx()}
		} else {
			m.intents().Inspect = &wire.Intent{CreatedIndex: m.nextIdx()}
		}
	case 0, 1:
		in := m.intents()
		if in.Detach != nil {
			in.Detach = nil
		} else {
			in.Detach = &wire.Intent{CreatedIndex: m.nextIdx(), Force: m.chance(0.3)}
		}
	case 2, 3, 4:
		in := m.intents()
		if in.Drain != nil && m.chance(0.5) {
			in.Drain = nil
		} else {
			mode := wire.DrainMaintenance
			if m.chance(0.5) {
				mode = wire.DrainRemoval
			}
			in.Drain = &wire.Intent{CreatedIndex: m.nextIdx(), Mode: mode, Force: m.chance(0.4), Wipe: m.chance(0.4)}
		}
	case 5, 6:
		m.intents().Resume = &wire.Intent{CreatedIndex: m.nextIdx()}
	case 7:
		if m.chance(0.4) {
			m.h.DeletionRequested = true
		}
	case 8:
		if m.h.Handoff != nil {
			hc := *m.h.Handoff
			hc.Confirmed = true
			m.h.Handoff = &hc
		}
	}
}

func (m *model) outcome(a Action) *Outcome {
	o := &Outcome{Action: a}
	switch k := m.rng.IntN(100); {
	case k < 55:
	case k < 65:
		o.InProgress = true
	case k < 73:
		o.Err, o.Message = ErrClassTransient, "timeout"
	case k < 77:
		o.Err, o.Message = ErrClassFenced, "lease lost"
	case k < 89:
		o.Err, o.Message = ErrClassFailed, "refused"
	case k < 92:
		o.Err, o.Message = ErrClassAuth, "bad credentials"
	default:
		o.Err, o.Message = ErrClassNotFound, "node not found"
	}
	if o.Err == ErrNone && !o.InProgress {
		switch a {
		case ActionRegister:
			o.ProvisioningID = fmt.Sprintf("node-%d", m.nextIdx())
			o.PoweredOn = boolp(m.chance(0.5))
		case ActionInspect, ActionReinspect:
			o.HardwareDetails = &wire.HardwareDetails{Model: "m"}
		case ActionPowerOn:
			o.PoweredOn = boolp(true)
		case ActionSoftPowerOff:
			o.PoweredOn = boolp(false)
		case ActionFirmwareUpdate:
			// The agent ends the task record before it reports success.
			m.h.Task = nil
		case ActionApplyBIOS:
			o.ResetNeeded = m.chance(0.8)
		}
	}
	if o.InProgress && a == ActionSoftPowerOff {
		o.PoweredOn = boolp(true)
	}
	return o
}

// step runs Step, checks every invariant, and applies the decision like the
// coordinator would. It returns false when the sequence is over.
func (m *model) step() bool {
	in := Input{Host: m.h, Now: m.now, Jitter: m.rng.Float64(), Last: m.last, Config: m.cfg}
	d := m.checkedStep(in)
	if m.t.Failed() {
		return false
	}
	m.check(in, d)
	if m.t.Failed() {
		return false
	}
	m.d = d
	m.states[d.Status.ProvisioningState]++
	m.ops[d.Status.OperationalStatus]++
	for _, name := range strings.Split(d.Rule, " > ") {
		m.rules[name]++
	}
	if m.chance(0.95) {
		m.h = applyDecision(m.h, d)
	} else {
		// The acks did not land (e.g. the intent was replaced meanwhile).
		m.h.Status = &d.Status
	}
	st := d.Status
	if d.Remove {
		// A removal past no return keeps being checked for a while (the
		// operator may try to cancel it); a deletion ends the sequence.
		return st.Extra[keyRemovalCommitted] == "true" && m.chance(0.8)
	}
	return true
}

// applyDecision is what the coordinator does with one status report, in one
// atomic write: the new status and the acknowledgements.
func applyDecision(h wire.Host, d Decision) wire.Host {
	st := d.Status
	h.Status = &st
	if len(d.Acks) == 0 || h.Intents == nil {
		return h
	}
	in := *h.Intents
	h.Intents = &in
	if in.PowerOff != nil {
		holds := map[string]*wire.Intent{}
		for k, v := range in.PowerOff {
			holds[k] = v
		}
		in.PowerOff = holds
	}
	for _, a := range d.Acks {
		for k, it := range in.PowerOff {
			if a.Kind == wire.IntentPowerOff && it.CreatedIndex == a.CreatedIndex {
				c := *it
				c.Acknowledged = true
				in.PowerOff[k] = &c
			}
		}
		for kind, p := range map[string]**wire.Intent{wire.IntentDetach: &in.Detach, wire.IntentDrain: &in.Drain, wire.IntentResume: &in.Resume,
			wire.IntentReboot: &in.Reboot, wire.IntentInspect: &in.Inspect, wire.IntentService: &in.Service} {
			if kind != a.Kind || *p == nil || (*p).CreatedIndex != a.CreatedIndex {
				continue
			}
			if a.Drop {
				*p = nil
			} else {
				c := **p
				c.Acknowledged = true
				*p = &c
			}
		}
	}
	return h
}

func (m *model) checkedStep(in Input) (d Decision) {
	defer func() {
		if p := recover(); p != nil {
			m.t.Errorf("%s: Step panicked: %v\ninput: %+v", m.where, p, in)
		}
	}()
	return Step(in)
}

func (m *model) fail(format string, a ...any) {
	m.t.Helper()
	m.t.Errorf("%s: %s", m.where, fmt.Sprintf(format, a...))
}

func (m *model) check(in Input, d Decision) {
	m.t.Helper()
	var prev wire.HostStatus
	if in.Host.Status != nil {
		prev = *in.Host.Status
	}
	st := d.Status
	flag := func(s wire.HostStatus, k string) bool { return s.Extra[k] == "true" }

	if d.Remove && d.Action != ActionNone {
		m.fail("remove with an action: %s", d)
	}
	if d.Blocked && d.Action != ActionNone {
		m.fail("blocked but acting: %s", d)
	}
	// No BMC/provisioner action while detached, unmanaged or awaiting
	// handoff; in maintenance only the ways out of it.
	if flag(st, keyDetached) && d.Action != ActionNone {
		m.fail("action while detached: %s", d)
	}
	if flag(prev, keyDetached) && in.Host.Intents != nil && in.Host.Intents.Detach != nil && d.Action != ActionNone {
		m.fail("action while detach is acknowledged: %s prev=%+v handoff=%+v", d, prev, in.Host.Handoff)
	}
	if flag(st, keyMaintenance) && !slices.Contains([]Action{ActionNone, ActionMaintenanceOff, ActionDetach, ActionDelete}, d.Action) {
		m.fail("action %q in maintenance: %s", d.Action, d)
	}
	if d.Action == ActionDelete && !in.Host.DeletionRequested {
		m.fail("delete without deletion: %s", d)
	}
	if st.ProvisioningState == wire.StateUnmanaged && d.Action != ActionNone {
		m.fail("action while unmanaged: %s", d)
	}
	if in.Host.Handoff != nil && !in.Host.Handoff.Confirmed && (d.Action != ActionNone || !d.Blocked) {
		m.fail("awaiting handoff but acting or unblocked: %s", d)
	}
	// No power change while a firmware task is recorded on the host.
	if t := in.Host.Task; t != nil && t.Kind == wire.BMCTaskFirmware && powerAction(d.Action) {
		m.fail("power action %s while firmware task %s is recorded: %s", d.Action, t.TaskURI, d)
	}
	// Power only in steady states (and power-off before delete, and the
	// reset that applies BIOS settings while preparing or servicing).
	// A power-off hold keeps the host off.
	if d.Action == ActionPowerOn && in.Host.Intents != nil && len(in.Host.Intents.PowerOff) > 0 {
		m.fail("power on while held off by %v: %s", in.Host.Intents.PowerOff, d)
	}
	switch d.Action {
	case ActionPowerOn, ActionPowerOff, ActionSoftPowerOff, ActionReinspect:
		if d.Action == ActionReinspect && st.ProvisioningState != wire.StateInspecting {
			m.fail("reinspect in %s: %s", st.ProvisioningState, d)
		}
		if d.Action != ActionReinspect && !steady(st.ProvisioningState) && !(d.Action == ActionPowerOff && st.ProvisioningState == wire.StatePoweringOffBeforeDelete) &&
			!((st.ProvisioningState == wire.StatePreparing || st.ProvisioningState == wire.StateServicing) && st.Extra[keyBIOSApplied] != "" && d.Action != ActionSoftPowerOff) {
			m.fail("power action in %s: %s", st.ProvisioningState, d)
		}
	}
	// Deleting a detached host: no power-off, no deprovisioning.
	if flag(prev, keyDetached) && in.Host.DeletionRequested && (d.Action == ActionPowerOff || d.Action == ActionDeprovision) {
		m.fail("detached host powered off or deprovisioned on delete: %s", d)
	}
	// A removal past its point of no return is never undone.
	if flag(prev, keyRemovalCommitted) && (!flag(st, keyRemovalCommitted) || !d.Remove) {
		m.fail("committed removal undone: %s", d)
	}
	// Errors are consistent.
	if (st.ErrorType == "") != (st.ErrorCount == 0) || st.ErrorCount < 0 {
		m.fail("inconsistent error %q count %d", st.ErrorType, st.ErrorCount)
	}
	if !slices.Contains(wire.ProvisioningStates, st.ProvisioningState) &&
		!(st.ProvisioningState == wire.StateNone && in.Host.Handoff != nil) {
		m.fail("unknown provisioning state %q", st.ProvisioningState)
	}
	if st.OperationalStatus == "" {
		m.fail("no operational status: %s", d)
	}
	// Resume never changes a host that is not in error.
	if in.Host.Intents != nil && in.Host.Intents.Resume != nil && prev.ErrorCount == 0 {
		in2 := in
		it := *in.Host.Intents
		it.Resume = nil
		in2.Host.Intents = &it
		d2 := Step(in2)
		if !reflect.DeepEqual(d2.Status, d.Status) || d2.Action != d.Action || d2.Remove != d.Remove || d2.Blocked != d.Blocked {
			m.fail("resume changed a host not in error:\nwith    %s\nwithout %s", d, d2)
		}
	}
	// Idempotence: the host as the coordinator now has it (new status and
	// acks, written atomically), stepped again with no outcome, decides the
	// same and records nothing new (a held-back action is asked for now).
	again := in
	again.Last = nil
	again.Host = applyDecision(in.Host, d)
	d3 := Step(again)
	if !reflect.DeepEqual(d3.Status, d.Status) || d3.Remove != d.Remove {
		m.fail("not a fixpoint:\nfirst  %s %v\nagain  %s %v", d, d.Status.Extra, d3, d3.Status.Extra)
	}
	held := in.Last != nil && (classify(in.Last) == resProgress || classify(in.Last) == resTransient)
	if !held && d3.Action != d.Action {
		m.fail("action not stable: first %s, again %s", d, d3)
	}
	if len(d3.Events) > 0 {
		m.fail("events recorded again: %+v (%s)", d3.Events, d3)
	}
}

// FuzzModel runs one random sequence per fuzz input, with the same
// invariants (make fuzz).
func FuzzModel(f *testing.F) {
	for _, s := range modelSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		m := &model{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: t0, idx: 1000,
			states: map[string]int{}, ops: map[string]int{}, rules: map[string]int{}}
		m.sequence(seed, 0)
	})
}
