package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestBMC5xxCountedAsError: a BMC that keeps answering 500 does not leave
// its host registering with errorCount 0 forever. With the real
// agent, coordinator and bmcsim: after MaxTransientFailures (default 5) in
// a row the host is in registration error with errorCount >= 1; once the
// fault heals, resume brings it to available and clears the count.
func TestBMC5xxCountedAsError(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1})
	e.simFault(0, "http500")
	e.apply(e.hostSpec("t0", "r1", 0))
	e.startAgent("r1", "a1") // --transient-retry 1s: the 5 failures take ~5 s
	h := e.waitHost("t0", 90*time.Second, "in registration error after 5 transient failures", func(h *wire.Host) error {
		s := h.Status
		if s == nil || s.ErrorCount < 1 {
			return fmt.Errorf("status %+v", s)
		}
		return nil
	})
	s := h.Status
	if s.ProvisioningState != wire.StateRegistering || s.OperationalStatus != wire.OpError || s.ErrorType != wire.ErrRegistration {
		t.Fatalf("want registering / error / registration error, got %s / %s / %q", s.ProvisioningState, s.OperationalStatus, s.ErrorType)
	}
	if !strings.Contains(s.ErrorMessage, "500") || !strings.Contains(s.ErrorMessage, "transient failures in a row") {
		t.Fatalf("the error message does not say the BMC answered 500 and why it counts: %q", s.ErrorMessage)
	}
	t.Logf("in error: %s (errorCount %d, extra %v)", s.ErrorMessage, s.ErrorCount, s.Extra)
	events, err := e.admin.Events(ctx(t), "t0")
	if err != nil {
		t.Fatal(err)
	}
	var sawTransient, sawError bool
	for _, ev := range events.Items {
		sawTransient = sawTransient || ev.Reason == "TransientFailure"
		sawError = sawError || ev.Reason == "RegistrationError"
	}
	if !sawTransient || !sawError {
		t.Fatalf("events: TransientFailure %t, RegistrationError %t: %+v", sawTransient, sawError, events.Items)
	}

	// Healed with no event: the backoff (minutes by default) holds the host
	// in error until the operator resumes it. The status says so itself:
	// its retry time is far ahead, so there is nothing to wait for.
	e.simFault(0, "none")
	requireBackoffAhead(t, e.host("t0"), 15*time.Second)
	if _, err := e.admin.Resume(ctx(t), "t0", wire.IntentRequest{}); err != nil {
		t.Fatal(err)
	}
	h = e.waitHost("t0", 60*time.Second, "available after heal and resume", stateIs(wire.StateAvailable, wire.OpOK))
	if h.Status.ErrorCount != 0 || h.Status.Extra["transientFailures"] != "" {
		t.Fatalf("recovered host keeps error bookkeeping: %+v", h.Status)
	}
}

// requireBackoffAhead checks that h is in a counted error whose backoff
// (status extra retryAt, written by the agent) ends at least min from now:
// the agent's own record that it will not retry before then.
func requireBackoffAhead(t testing.TB, h *wire.Host, min time.Duration) {
	t.Helper()
	if h.Status == nil || h.Status.ErrorCount < 1 {
		t.Fatalf("%s is not in a counted error: %+v", h.Name, h.Status)
	}
	at, err := time.Parse(time.RFC3339Nano, h.Status.Extra["retryAt"])
	if err != nil {
		t.Fatalf("%s: no backoff deadline in the status (extra retryAt %q): %v", h.Name, h.Status.Extra["retryAt"], err)
	}
	if left := time.Until(at); left < min {
		t.Fatalf("%s retries in %s, want a backoff of at least %s", h.Name, left.Round(time.Millisecond), min)
	}
}
