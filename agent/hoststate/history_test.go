package hoststate

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// metric returns the host's current metric of op (zero when none).
func (s *sim) metric(op string) wire.OperationMetric {
	s.t.Helper()
	h := s.d.Status.OperationHistory
	if h == nil {
		return wire.OperationMetric{}
	}
	return *h.Metric(op)
}

// wantMetric checks op's start and end (zero = must be zero).
func (s *sim) wantMetric(op string, start, end time.Time) {
	s.t.Helper()
	m := s.metric(op)
	if !m.Start.Equal(start) || !m.End.Equal(end) {
		s.t.Fatalf("%s: want start %s end %s, got start %s end %s (%s)", op, start, end, m.Start, m.End, s.d)
	}
}

var zero time.Time

func TestOperationHistoryLifecycle(t *testing.T) {
	s := newSim(t, fullHost())
	s.expect(ActionRegister, wire.StateRegistering)
	s.wantMetric(wire.OperationRegister, t0, zero)
	s.wantMetric(wire.OperationInspect, zero, zero)

	t1 := t0.Add(2 * time.Second)
	s.now = t1
	s.step(&Outcome{Action: ActionRegister, ProvisioningID: "node-1", PoweredOn: boolp(false)})
	s.expect(ActionInspect, wire.StateInspecting)
	s.wantMetric(wire.OperationRegister, t0, t1)
	s.wantMetric(wire.OperationInspect, t1, zero)

	// In progress: the start stays, no end.
	s.now = t1.Add(time.Second)
	s.step(&Outcome{Action: ActionInspect, InProgress: true})
	s.wantMetric(wire.OperationInspect, t1, zero)

	t2 := t1.Add(4200 * time.Millisecond)
	s.now = t2
	s.step(&Outcome{Action: ActionInspect, HardwareDetails: &wire.HardwareDetails{Model: "x"}})
	s.expect(ActionProvide, wire.StateAvailable)
	s.wantMetric(wire.OperationInspect, t1, t2)
	if d := s.metric(wire.OperationInspect).Duration(); d != 4200*time.Millisecond {
		t.Fatalf("inspect duration %s", d)
	}
	s.settle()
	s.wantMetric(wire.OperationRegister, t0, t1)

	// Provision, deprovision, provision again: the second run restarts the
	// provision metric.
	t3 := t2.Add(time.Minute)
	s.now = t3
	s.edit(func(h *wire.Host) { h.Image = &wire.Image{URL: "http://img/a.qcow2"} })
	s.expect(ActionProvision, wire.StateProvisioning)
	s.wantMetric(wire.OperationProvision, t3, zero)
	t4 := t3.Add(90 * time.Second)
	s.now = t4
	s.ok()
	s.expect(ActionNone, wire.StateProvisioned)
	s.wantMetric(wire.OperationProvision, t3, t4)

	t5 := t4.Add(time.Hour)
	s.now = t5
	s.edit(func(h *wire.Host) { h.Image = nil })
	s.expect(ActionDeprovision, wire.StateDeprovisioning)
	s.wantMetric(wire.OperationDeprovision, t5, zero)
	s.wantMetric(wire.OperationProvision, t3, t4)
	t6 := t5.Add(30 * time.Second)
	s.now = t6
	s.ok()
	s.expect(ActionPowerOn, wire.StateAvailable)
	s.wantMetric(wire.OperationDeprovision, t5, t6)
	s.settle()

	t7 := t6.Add(time.Hour)
	s.now = t7
	s.edit(func(h *wire.Host) { h.Image = &wire.Image{URL: "http://img/b.qcow2"} })
	s.expect(ActionProvision, wire.StateProvisioning)
	s.wantMetric(wire.OperationProvision, t7, zero)
	s.wantMetric(wire.OperationDeprovision, t5, t6)
	s.now = t7.Add(time.Minute)
	s.ok()
	s.wantMetric(wire.OperationProvision, t7, t7.Add(time.Minute))

	// Steps with nothing to do change nothing.
	s.now = t7.Add(time.Hour)
	before := *s.d.Status.OperationHistory
	s.step(nil)
	if *s.d.Status.OperationHistory != before {
		t.Fatalf("an idle step changed the history: %+v → %+v", before, *s.d.Status.OperationHistory)
	}
}

// An agent restart mid-operation: the new agent's first Step sees the
// status the coordinator holds (through JSON) and keeps the start.
func TestOperationHistoryRestartKeepsStart(t *testing.T) {
	s := newSim(t, fullHost())
	s.now = t0.Add(time.Second)
	s.ok()
	s.expect(ActionInspect, wire.StateInspecting)
	start := s.now
	s.now = start.Add(2 * time.Second)
	s.step(&Outcome{Action: ActionInspect, InProgress: true})

	// Round-trip the host through the coordinator's JSON.
	b, err := json.Marshal(s.h)
	if err != nil {
		t.Fatal(err)
	}
	var h wire.Host
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	s.h = h
	s.now = start.Add(time.Minute)
	s.step(nil) // the restarted agent: no outcome
	s.expect(ActionInspect, wire.StateInspecting)
	s.wantMetric(wire.OperationInspect, start, zero)
	end := start.Add(2 * time.Minute)
	s.now = end
	s.step(&Outcome{Action: ActionInspect, HardwareDetails: &wire.HardwareDetails{Model: "x"}})
	s.wantMetric(wire.OperationInspect, start, end)
}

// A failed operation keeps its start and gets no end; its eventual success
// ends the same run.
func TestOperationHistoryFailureKeepsStart(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	start := t0.Add(time.Minute)
	s.now = start
	s.edit(func(h *wire.Host) { h.Image = &wire.Image{URL: "http://img/a.qcow2"} })
	s.expect(ActionProvision, wire.StateProvisioning)
	s.now = start.Add(time.Second)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType == "" {
		t.Fatalf("want an error: %s", s.d)
	}
	s.wantMetric(wire.OperationProvision, start, zero)
	// After the backoff it is retried and succeeds: same run, ended now.
	s.now = start.Add(10 * time.Minute)
	s.step(nil)
	s.expect(ActionProvision, wire.StateProvisioning)
	s.wantMetric(wire.OperationProvision, start, zero)
	end := s.now.Add(time.Second)
	s.now = end
	s.ok()
	s.expect(ActionNone, wire.StateProvisioned)
	s.wantMetric(wire.OperationProvision, start, end)
}

// An operation abandoned without success (image removed while
// provisioning, node lost) keeps its start and no end.
func TestOperationHistoryAbandonedHasNoEnd(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	start := t0.Add(time.Minute)
	s.now = start
	s.edit(func(h *wire.Host) { h.Image = &wire.Image{URL: "http://img/a.qcow2"} })
	s.expect(ActionProvision, wire.StateProvisioning)
	s.now = start.Add(time.Second)
	s.edit(func(h *wire.Host) { h.Image = nil })
	s.expect(ActionDeprovision, wire.StateDeprovisioning)
	s.wantMetric(wire.OperationProvision, start, zero)
	s.wantMetric(wire.OperationDeprovision, start.Add(time.Second), zero)

	// Node lost mid-deprovision: registration starts again; deprovision
	// has no end.
	lost := start.Add(2 * time.Second)
	s.now = lost
	s.fail(ErrClassNotFound)
	s.expect(ActionRegister, wire.StateRegistering)
	s.wantMetric(wire.OperationDeprovision, start.Add(time.Second), zero)
	s.wantMetric(wire.OperationRegister, lost, zero)
	// Re-registered (this host was inspected without details): register
	// ends and a new inspection starts.
	s.now = lost.Add(time.Second)
	s.ok()
	s.expect(ActionInspect, wire.StateInspecting)
	s.wantMetric(wire.OperationRegister, lost, lost.Add(time.Second))
	s.wantMetric(wire.OperationInspect, lost.Add(time.Second), zero)
}

// Step never mutates its input's history.
func TestOperationHistoryInputNotMutated(t *testing.T) {
	st := wire.HostStatus{ProvisioningState: wire.StateInspecting, Extra: map[string]string{keyNode: nodeEnrolled},
		OperationHistory: &wire.OperationHistory{Inspect: wire.OperationMetric{Start: t0}}}
	h := fullHost()
	h.Status = &st
	d := Step(Input{Host: h, Now: t0.Add(time.Second), Last: &Outcome{Action: ActionInspect, HardwareDetails: &wire.HardwareDetails{}}})
	if d.Status.OperationHistory.Inspect.End.IsZero() {
		t.Fatalf("inspect not ended: %s", d)
	}
	if !st.OperationHistory.Inspect.End.IsZero() {
		t.Fatal("Step mutated the input's operation history")
	}
}
