package hoststate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// transient fails the pending action transiently and asks again (the agent
// steps again after RequeueAfter).
func (s *sim) transient() {
	s.t.Helper()
	s.fail(ErrClassTransient)
}

// retry steps with no outcome after the decision's requeue time, and
// checks that the action is asked for again.
func (s *sim) retry(a Action, state string) {
	s.t.Helper()
	s.now = s.now.Add(s.d.RequeueAfter)
	s.step(nil)
	s.expect(a, state)
}

// TestTransientFailuresCountedAfterBound: a BMC that keeps failing
// transiently is counted as a registration error after
// MaxTransientFailures in a row, backs off like any error, and resume
// retries it at once.
func TestTransientFailuresCountedAfterBound(t *testing.T) {
	s := newSim(t, fullHost())
	s.expect(ActionRegister, wire.StateRegistering)
	for n := 1; n < DefaultMaxTransientFailures; n++ {
		s.transient()
		st := s.d.Status
		if st.ErrorCount != 0 || st.ErrorType != "" || s.d.RequeueAfter != DefaultTransientRetry || s.d.Action != ActionNone {
			t.Fatalf("transient failure %d counted early: %s", n, s.d)
		}
		if got := st.Extra[keyTransient]; got != strconv.Itoa(n) {
			t.Fatalf("after %d transient failures the status says %q", n, got)
		}
		s.retry(ActionRegister, wire.StateRegistering)
	}
	s.transient()
	st := s.d.Status
	if st.ErrorType != wire.ErrRegistration || st.ErrorCount != 1 || st.OperationalStatus != wire.OpError {
		t.Fatalf("5th transient failure not counted: %s", s.d)
	}
	if !strings.Contains(st.ErrorMessage, "5 transient failures in a row") || !strings.Contains(st.ErrorMessage, "boom") {
		t.Fatalf("error message %q does not say why it counts", st.ErrorMessage)
	}
	if want := Backoff(Config{}, 1, 0.5); s.d.RequeueAfter != want || s.d.Action != ActionNone {
		t.Fatalf("want backoff %s, got %s", want, s.d)
	}
	if !hasEvent(s.d, "RegistrationError") {
		t.Fatalf("no RegistrationError event: %v", s.d.Events)
	}
	// Still failing after the backoff: every further one in the run counts.
	s.retry(ActionRegister, wire.StateRegistering)
	s.transient()
	if s.d.Status.ErrorCount != 2 || s.d.RequeueAfter != Backoff(Config{}, 2, 0.5) {
		t.Fatalf("6th transient failure: %s", s.d)
	}
	// The operator heals the BMC and resumes: retried now, and the success
	// clears the error and the run.
	s.h.Intents = &wire.Intents{Resume: intent(nil)}
	s.step(nil)
	s.expect(ActionRegister, wire.StateRegistering)
	if s.d.Status.ErrorCount != 1 {
		t.Fatalf("resume: %s", s.d)
	}
	s.ok()
	s.expect(ActionInspect, wire.StateInspecting)
	if st := s.d.Status; st.ErrorCount != 0 || st.ErrorType != "" || st.Extra[keyTransient] != "" {
		t.Fatalf("success must clear the error and the run: %+v", st)
	}
}

func TestTransientRunEndsOnAnswer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		interrupt func(s *sim)
		count     int // errorCount after the break and 4 more transient failures
	}{
		{"success", func(s *sim) { s.ok(); s.expect(ActionInspect, wire.StateInspecting) }, 0},
		{"plain failure", func(s *sim) { s.fail(ErrClassFailed); s.retry(ActionRegister, wire.StateRegistering) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, fullHost())
			for i := 0; i < DefaultMaxTransientFailures-1; i++ {
				s.transient()
				s.retry(ActionRegister, wire.StateRegistering)
			}
			tc.interrupt(s)
			a, state := s.d.Action, s.d.Status.ProvisioningState
			for i := 0; i < DefaultMaxTransientFailures-1; i++ {
				s.transient()
				s.retry(a, state)
			}
			if s.d.Status.ErrorCount != tc.count {
				t.Fatalf("the run did not restart after a %s: %s", tc.name, s.d)
			}
		})
	}
}

// Fenced failures say our lease is gone, not the BMC: they neither count
// nor end a run.
func TestFencedNeitherCountsNorEndsRun(t *testing.T) {
	s := newSim(t, fullHost())
	for i := 0; i < DefaultMaxTransientFailures-1; i++ {
		s.transient()
		s.retry(ActionRegister, wire.StateRegistering)
	}
	for i := 0; i < 10; i++ {
		s.fail(ErrClassFenced)
		if s.d.Status.ErrorCount != 0 {
			t.Fatalf("fenced counted: %s", s.d)
		}
		s.retry(ActionRegister, wire.StateRegistering)
	}
	s.transient()
	if s.d.Status.ErrorCount != 1 {
		t.Fatalf("the run was reset by fenced failures: %s", s.d)
	}
}

// The count lives in the status: a new agent (failover, restart) that
// reads the status from the coordinator continues the run.
func TestTransientRunSurvivesFailover(t *testing.T) {
	s := newSim(t, fullHost())
	for i := 0; i < 3; i++ {
		s.transient()
		s.retry(ActionRegister, wire.StateRegistering)
	}
	// The new agent has only the host as the coordinator stored it.
	h := s.h
	st := *h.Status
	h.Status = &st
	s2 := &sim{t: t, h: h, now: s.now}
	s2.step(nil)
	s2.expect(ActionRegister, wire.StateRegistering)
	s2.transient()
	s2.retry(ActionRegister, wire.StateRegistering)
	s2.transient()
	if s2.d.Status.ErrorCount != 1 {
		t.Fatalf("the new agent restarted the run: %s", s2.d)
	}
}

// Elsewhere the error type is the failing action's in that state.
func TestTransientCountedAsStateErrorType(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	if st := s.d.Status; st.ProvisioningState != wire.StateAvailable || !st.PoweredOn {
		t.Fatalf("not settled: %s", s.d)
	}
	s.edit(func(h *wire.Host) { h.Online = false })
	s.expect(ActionPowerOff, wire.StateAvailable)
	for i := 0; i < DefaultMaxTransientFailures; i++ {
		s.transient()
		if i < DefaultMaxTransientFailures-1 {
			s.retry(ActionPowerOff, wire.StateAvailable)
		}
	}
	if st := s.d.Status; st.ErrorType != wire.ErrPowerManagement || st.ErrorCount != 1 {
		t.Fatalf("want a power management error: %s", s.d)
	}
	// In a deletion the counted failure is one of the deletion's tries.
	s.h.DeletionRequested = true
	s.now = s.now.Add(s.d.RequeueAfter)
	s.step(nil)
	s.expect(ActionPowerOff, wire.StatePoweringOffBeforeDelete)
	s.transient() // still in the run: counted at once
	if s.d.Status.Extra[keyDeleteTries] != "1" {
		t.Fatalf("a counted transient failure is not a deletion try: %s %v", s.d, s.d.Status.Extra)
	}
}

func TestTransientBoundConfigurable(t *testing.T) {
	h := fullHost()
	for i := 0; i < 20; i++ {
		d := Step(Input{Host: h, Now: t0, Config: Config{MaxTransientFailures: -1},
			Last: &Outcome{Action: ActionRegister, Err: ErrClassTransient, Message: "boom"}})
		if d.Status.ErrorCount != 0 || d.RequeueAfter != DefaultTransientRetry {
			t.Fatalf("MaxTransientFailures -1 counted failure %d: %s", i+1, d)
		}
		st := d.Status
		h.Status = &st
	}
	d := Step(Input{Host: fullHost(), Now: t0, Config: Config{MaxTransientFailures: 1},
		Last: &Outcome{Action: ActionRegister, Err: ErrClassTransient, Message: "boom"}})
	if d.Status.ErrorCount != 1 || !strings.Contains(d.Status.ErrorMessage, "from the 1st on") {
		t.Fatalf("MaxTransientFailures 1: %s %q", d, d.Status.ErrorMessage)
	}
}
