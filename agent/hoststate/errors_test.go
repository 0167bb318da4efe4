package hoststate

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		count  int
		jitter float64
		want   time.Duration
	}{
		{1, 0, 2 * time.Minute},
		{1, 0.5, 90 * time.Second},
		{0, 0, 2 * time.Minute}, // treated as 1
		{2, 0, 4 * time.Minute},
		{5, 0, 32 * time.Minute},
		{9, 0, 512 * time.Minute},
		{10, 0, 512 * time.Minute}, // capped
		{100, 0, 512 * time.Minute},
		{3, -1, 8 * time.Minute}, // clamped
	} {
		if got := Backoff(Config{}, tc.count, tc.jitter); got != tc.want {
			t.Errorf("Backoff(%d, %v) = %s, want %s", tc.count, tc.jitter, got, tc.want)
		}
	}
	// Jitter never takes more than half, never adds.
	for n := 1; n <= 12; n++ {
		for _, j := range []float64{0, 0.25, 0.5, 0.999, 1, 7} {
			full := Backoff(Config{}, n, 0)
			got := Backoff(Config{}, n, j)
			if got > full || got <= full/2 {
				t.Errorf("Backoff(%d, %v) = %s outside (%s, %s]", n, j, got, full/2, full)
			}
		}
	}
	c := Config{BackoffBase: time.Second, BackoffMaxExponent: 3}
	if got := Backoff(c, 7, 0); got != 8*time.Second {
		t.Errorf("configured backoff = %s, want 8s", got)
	}
}

func TestCountedErrorBackoffAndRetry(t *testing.T) {
	s := newSim(t, fullHost())
	s.ok()
	s.expect(ActionInspect, wire.StateInspecting)
	for n := 1; n <= 4; n++ {
		s.fail(ErrClassFailed)
		st := s.d.Status
		if st.ErrorType != wire.ErrInspection || st.ErrorCount != n || st.OperationalStatus != wire.OpError || st.ErrorMessage == "" {
			t.Fatalf("after failure %d: %+v", n, st)
		}
		want := Backoff(Config{}, n, 0.5)
		if s.d.RequeueAfter != want || s.d.Action != ActionNone {
			t.Fatalf("after failure %d: want requeue %s, got %s", n, want, s.d)
		}
		// Idempotent: a spurious step before the deadline does nothing.
		s.now = s.now.Add(want - time.Second)
		s.step(nil)
		if s.d.Action != ActionNone || s.d.RequeueAfter != time.Second {
			t.Fatalf("retried before backoff: %s", s.d)
		}
		s.now = s.now.Add(time.Second)
		s.step(nil)
		s.expect(ActionInspect, wire.StateInspecting)
	}
	s.ok()
	s.expect(ActionProvide, wire.StateAvailable)
	if st := s.d.Status; st.ErrorCount != 0 || st.ErrorType != "" || st.OperationalStatus != wire.OpOK {
		t.Fatalf("success must clear: %+v", st)
	}
}

func TestTransientNotCounted(t *testing.T) {
	for _, c := range []ErrClass{ErrClassTransient, ErrClassFenced} {
		t.Run(string(c), func(t *testing.T) {
			s := newSim(t, fullHost())
			s.fail(c)
			if s.d.Status.ErrorCount != 0 || s.d.Status.ErrorType != "" || s.d.Action != ActionNone {
				t.Fatalf("transient counted or retried at once: %s", s.d)
			}
			if s.d.RequeueAfter != DefaultTransientRetry {
				t.Fatalf("want requeue %s: %s", DefaultTransientRetry, s.d)
			}
			if got := hasEvent(s.d, "TransientFailure"); got != (c == ErrClassTransient) {
				t.Fatalf("TransientFailure event = %t for %s", got, c)
			}
			s.step(nil)
			s.expect(ActionRegister, wire.StateRegistering)
		})
	}
}

func TestAuthIsRegistrationError(t *testing.T) {
	s := newSim(t, fullHost())
	s.fail(ErrClassAuth)
	if s.d.Status.ErrorType != wire.ErrRegistration || s.d.Status.ErrorCount != 1 {
		t.Fatalf("want registration error: %s", s.d)
	}
}

func TestSpecEditLiftsBackoff(t *testing.T) {
	s := newSim(t, fullHost())
	s.fail(ErrClassFailed)
	s.expect(ActionNone, wire.StateRegistering)
	s.edit(func(h *wire.Host) { h.BMC.Credentials = "fixed" })
	s.expect(ActionRegister, wire.StateRegistering)
	if s.d.Status.ErrorCount != 1 {
		t.Fatalf("an edit keeps the count until success: %s", s.d)
	}
}

func TestErrorTypes(t *testing.T) {
	for _, tc := range []struct {
		a     Action
		state string
		class ErrClass
		want  string
	}{
		{ActionRegister, wire.StateRegistering, ErrClassFailed, wire.ErrRegistration},
		{ActionRegister, wire.StateProvisioned, ErrClassFailed, wire.ErrProvisionedRegistration},
		{ActionPowerOn, wire.StateAvailable, ErrClassAuth, wire.ErrRegistration},
		{ActionPowerOn, wire.StateExternallyProvisioned, ErrClassAuth, wire.ErrProvisionedRegistration},
		{ActionInspect, wire.StateInspecting, ErrClassFailed, wire.ErrInspection},
		{ActionProvide, wire.StateAvailable, ErrClassFailed, wire.ErrProvisioning},
		{ActionProvision, wire.StateProvisioning, ErrClassFailed, wire.ErrProvisioning},
		{ActionDeprovision, wire.StateDeprovisioning, ErrClassFailed, wire.ErrDeprovisioning},
		{ActionDelete, wire.StateDeleting, ErrClassFailed, wire.ErrDeprovisioning},
		{ActionAdopt, wire.StateExternallyProvisioned, ErrClassFailed, wire.ErrProvisionedRegistration},
		{ActionDetach, wire.StateProvisioned, ErrClassFailed, wire.ErrDetach},
		{ActionMaintenanceOn, wire.StateProvisioned, ErrClassFailed, wire.ErrDetach},
		{ActionMaintenanceOff, wire.StateProvisioned, ErrClassFailed, wire.ErrDetach},
		{ActionPowerOn, wire.StateAvailable, ErrClassFailed, wire.ErrPowerManagement},
		{ActionPowerOff, wire.StateProvisioned, ErrClassFailed, wire.ErrPowerManagement},
		{Action("bogus"), wire.StateAvailable, ErrClassFailed, wire.ErrRegistration},
	} {
		if got := errorTypeFor(tc.a, tc.state, tc.class); got != tc.want {
			t.Errorf("errorTypeFor(%s, %s, %s) = %q, want %q", tc.a, tc.state, tc.class, got, tc.want)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		o    Outcome
		want result
	}{
		{Outcome{Action: ActionInspect}, resOK},
		{Outcome{Action: ActionInspect, InProgress: true}, resProgress},
		{Outcome{Action: ActionInspect, Err: ErrClassTransient, InProgress: true}, resTransient},
		{Outcome{Action: ActionInspect, Err: ErrClassFenced}, resTransient},
		{Outcome{Action: ActionInspect, Err: ErrClassAuth}, resFailed},
		{Outcome{Action: ActionInspect, Err: "weird"}, resFailed},
		{Outcome{Action: ActionInspect, Err: ErrClassNotFound}, resNotFound},
		{Outcome{Action: ActionDetach, Err: ErrClassNotFound}, resOK},
		{Outcome{Action: ActionDelete, Err: ErrClassNotFound}, resOK},
		{Outcome{Action: ActionRegister, Err: ErrClassNotFound}, resFailed},
	} {
		if got := classify(&tc.o); got != tc.want {
			t.Errorf("classify(%+v) = %s, want %s", tc.o, got, tc.want)
		}
	}
}

func TestReasonFor(t *testing.T) {
	if got := reasonFor(wire.ErrPowerManagement); got != "PowerManagementError" {
		t.Fatalf("reasonFor = %q", got)
	}
}

func TestStepDoesNotMutateInput(t *testing.T) {
	h := fullHost()
	h.Status = &wire.HostStatus{ProvisioningState: wire.StateRegistering, Extra: map[string]string{"keep": "me"}}
	Step(Input{Host: h, Now: t0, Last: &Outcome{Action: ActionRegister}})
	if h.Status.ProvisioningState != wire.StateRegistering || len(h.Status.Extra) != 1 {
		t.Fatalf("Step mutated its input: %+v", h.Status)
	}
}

func TestTransientEventRecordedOnce(t *testing.T) {
	s := newSim(t, fullHost())
	s.fail(ErrClassTransient)
	if !hasEvent(s.d, "TransientFailure") {
		t.Fatalf("want an event: %v", s.d.Events)
	}
	for i := 0; i < 3; i++ {
		s.step(nil)
		s.fail(ErrClassTransient)
		if len(s.d.Events) != 0 {
			t.Fatalf("transient failure %d recorded again: %v", i+2, s.d.Events)
		}
	}
	s.step(nil)
	s.ok()
	s.fail(ErrClassTransient)
	if !hasEvent(s.d, "TransientFailure") {
		t.Fatalf("after a success the next transient failure is recorded: %v", s.d.Events)
	}
}
