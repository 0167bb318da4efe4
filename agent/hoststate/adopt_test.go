package hoststate

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

func extHost() wire.Host {
	h := fullHost()
	h.ExternallyProvisioned = true
	return h
}

func TestExternallyProvisionedAdopt(t *testing.T) {
	s := newSim(t, extHost())
	s.expect(ActionRegister, wire.StateRegistering)
	s.step(&Outcome{Action: ActionRegister, PoweredOn: boolp(true)})
	s.expect(ActionAdopt, wire.StateExternallyProvisioned)
	s.ok()
	// Already on and online: nothing; never inspected.
	s.expect(ActionNone, wire.StateExternallyProvisioned)
	if s.d.Status.OperationalStatus != wire.OpOK {
		t.Fatalf("want ok: %s", s.d)
	}
}

func TestAdoptFailureBacksOff(t *testing.T) {
	s := newSim(t, extHost())
	s.step(&Outcome{Action: ActionRegister, PoweredOn: boolp(true)})
	s.expect(ActionAdopt, wire.StateExternallyProvisioned)
	s.step(&Outcome{Action: ActionAdopt, Err: ErrClassFailed, Message: "adopt failed: no port"})
	st := s.d.Status
	if st.ErrorType != wire.ErrProvisionedRegistration || st.ErrorCount != 1 || st.OperationalStatus != wire.OpError {
		t.Fatalf("want provisioned registration error: %+v", st)
	}
	wait := s.d.RequeueAfter
	if wait < time.Minute || wait > 2*time.Minute {
		t.Fatalf("first backoff %s outside [1m,2m]", wait)
	}
	// Before the backoff ends: nothing, and the requeue shrinks.
	s.now = s.now.Add(30 * time.Second)
	s.step(nil)
	if s.d.Action != ActionNone || s.d.RequeueAfter != wait-30*time.Second {
		t.Fatalf("retried early: %s", s.d)
	}
	s.now = s.now.Add(wait)
	s.step(nil)
	s.expect(ActionAdopt, wire.StateExternallyProvisioned)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorCount != 2 {
		t.Fatalf("want errorCount 2: %s", s.d)
	}
	s.now = s.now.Add(time.Hour)
	s.step(nil)
	s.ok()
	if s.d.Status.ErrorCount != 0 || s.d.Status.ErrorType != "" || s.d.Status.Extra[keyRetryAt] != "" {
		t.Fatalf("success must clear the error: %+v", s.d.Status)
	}
}

func TestLostNodeReadoptsWithoutPowerChange(t *testing.T) {
	for _, state := range []string{wire.StateProvisioned, wire.StateExternallyProvisioned} {
		t.Run(state, func(t *testing.T) {
			h := fullHost()
			if state == wire.StateExternallyProvisioned {
				h = extHost()
			} else {
				h.Image = &wire.Image{URL: "http://i"}
			}
			s := newSim(t, h)
			s.settle()
			s.expect(ActionNone, state)
			id := s.d.Status.ProvisioningID
			// The operator turns it off; Ironic has lost its database.
			s.edit(func(h *wire.Host) { h.Online = false })
			s.expect(ActionPowerOff, state)
			s.step(&Outcome{Action: ActionPowerOff, Err: ErrClassNotFound, Message: "node not found"})
			if !hasEvent(s.d, "NodeLost") {
				t.Fatalf("no NodeLost event: %v", s.d.Events)
			}
			// Registered again at once; no power action until adopted.
			s.expect(ActionRegister, state)
			s.step(&Outcome{Action: ActionRegister, ProvisioningID: "new-" + id})
			s.expect(ActionAdopt, state)
			s.ok()
			if s.d.Status.ProvisioningID != "new-"+id {
				t.Fatalf("provisioning ID not updated: %+v", s.d.Status)
			}
			// Only now is power asserted again.
			s.expect(ActionPowerOff, state)
		})
	}
}

func TestNodeLostMidOperationRestartsRegistration(t *testing.T) {
	s := newSim(t, fullHost())
	s.ok()
	s.expect(ActionInspect, wire.StateInspecting)
	s.fail(ErrClassNotFound)
	s.expect(ActionRegister, wire.StateRegistering)
	s.step(&Outcome{Action: ActionRegister})
	s.expect(ActionInspect, wire.StateInspecting)
}

func TestPivotedHostAwaitsHandoff(t *testing.T) {
	h := extHost()
	h.Handoff = &wire.Handoff{SourceTier: "A", SourceClusterID: "a", DetachIndex: 42}
	h.Status = &wire.HostStatus{
		ProvisioningState: wire.StateProvisioned, HardwareDetails: &wire.HardwareDetails{Model: "m"},
		ProvisioningID: "from-A", PoweredOn: true,
		Extra: map[string]string{keyNode: nodeReady, keyDetached: "true"},
	}
	s := newSim(t, h)
	if s.d.Action != ActionNone || !s.d.Blocked || s.d.Status.OperationalStatus != wire.OpAwaitingHandoff {
		t.Fatalf("want awaiting-handoff, blocked: %s", s.d)
	}
	s.edit(func(h *wire.Host) { h.Online = false })
	if s.d.Action != ActionNone {
		t.Fatalf("acted before handoff: %s", s.d)
	}
	// Confirmed: registered again here, adopted, never inspected.
	s.h.Handoff.Confirmed = true
	s.step(nil)
	s.expect(ActionRegister, wire.StateRegistering)
	if s.d.Status.ProvisioningID != "" || s.d.Status.HardwareDetails == nil {
		t.Fatalf("take-over must keep hardware details and drop A's node: %+v", s.d.Status)
	}
	s.step(&Outcome{Action: ActionRegister, PoweredOn: boolp(true)})
	s.expect(ActionAdopt, wire.StateExternallyProvisioned)
	s.ok()
	s.expect(ActionPowerOff, wire.StateExternallyProvisioned)
}

func TestPivotedHostDeletedBeforeHandoff(t *testing.T) {
	h := extHost()
	h.Handoff = &wire.Handoff{SourceTier: "A", DetachIndex: 7}
	h.DeletionRequested = true
	h.Status = &wire.HostStatus{ProvisioningState: wire.StateProvisioned, Extra: map[string]string{keyNode: nodeReady}}
	d := Step(Input{Host: h, Now: t0})
	if !d.Remove || d.Action != ActionNone {
		t.Fatalf("want removal without any action: %s", d)
	}
}

func TestHardwareDetailsSkipInspection(t *testing.T) {
	h := fullHost()
	h.Status = &wire.HostStatus{HardwareDetails: &wire.HardwareDetails{Model: "m"}}
	s := newSim(t, h)
	s.expect(ActionRegister, wire.StateRegistering)
	s.ok()
	s.expect(ActionProvide, wire.StateAvailable)
	// And inspecting with details (however they came) skips too.
	h = fullHost()
	h.Status = &wire.HostStatus{ProvisioningState: wire.StateInspecting, HardwareDetails: &wire.HardwareDetails{},
		Extra: map[string]string{keyNode: nodeEnrolled}}
	d := Step(Input{Host: h, Now: t0})
	if d.Action != ActionProvide || d.Status.ProvisioningState != wire.StateAvailable {
		t.Fatalf("want provide in available: %s", d)
	}
}

func TestExternallyProvisionedSetOnAvailable(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	s.expect(ActionNone, wire.StateAvailable)
	s.edit(func(h *wire.Host) { h.ExternallyProvisioned = true })
	s.expect(ActionAdopt, wire.StateExternallyProvisioned)
}
