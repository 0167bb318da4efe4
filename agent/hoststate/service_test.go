package hoststate

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// serviceSim is a provisioned host whose spec.bios and spec.firmware
// changed (no update policy: nothing happens by itself).
func serviceSim(t *testing.T) *sim {
	t.Helper()
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.BIOS, h.Firmware = testBIOS, testFirmware })
	s.expect(ActionNone, wire.StateProvisioned)
	return s
}

// TestServiceIntent: a service intent takes a provisioned host through
// servicing once — firmware first, then the BIOS settings and the one
// power cycle they need, the read-back — states the plan when it starts,
// and ends back in provisioned with the intent dropped.
func TestServiceIntent(t *testing.T) {
	s := serviceSim(t)
	s.intents().Service = intent(nil)
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StateServicing)
	if !hasEvent(s.d, ReasonServicingStarted) || !s.h.Intents.Service.Acknowledged {
		t.Fatalf("want ServicingStarted and the intent acknowledged: %s", s.d)
	}
	for _, e := range s.d.Events {
		if e.Reason == ReasonServicingStarted && !strings.Contains(e.Message, "at most 1 power cycle") {
			t.Fatalf("ServicingStarted does not state the power cycles: %q", e.Message)
		}
	}
	s.step(&Outcome{Action: ActionFirmwareUpdate, InProgress: true})
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StateServicing)
	s.ok()
	s.expect(ActionApplyBIOS, wire.StateServicing)
	s.step(&Outcome{Action: ActionApplyBIOS, ResetNeeded: true})
	s.expect(ActionPowerOff, wire.StateServicing)
	s.ok()
	s.expect(ActionPowerOn, wire.StateServicing)
	s.ok()
	s.expect(ActionVerifyBIOS, wire.StateServicing)
	s.ok()
	s.expect(ActionNone, wire.StateProvisioned)
	if !hasEvent(s.d, ReasonServiced) || s.h.Intents != nil && s.h.Intents.Service != nil {
		t.Fatalf("want Serviced and the intent dropped: %s", s.d)
	}
	s.step(nil)
	s.expect(ActionNone, wire.StateProvisioned)

	// A second intent reads the BMC again (it may have been changed by
	// hand): nothing differs, so no power cycle.
	s.intents().Service = intent(nil)
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StateServicing)
	s.ok()
	s.expect(ActionApplyBIOS, wire.StateServicing)
	s.ok() // ResetNeeded false
	s.expect(ActionVerifyBIOS, wire.StateServicing)
	s.ok()
	s.expect(ActionNone, wire.StateProvisioned)
}

// TestServiceFailureAndWithdrawal: a failure stops in servicing with a
// servicing error (resume retries); withdrawing the intent ends servicing
// without the rest (a recorded flash is still followed to its end).
func TestServiceFailureAndWithdrawal(t *testing.T) {
	s := serviceSim(t)
	s.intents().Service = intent(nil)
	s.step(nil)
	s.ok()
	s.expect(ActionApplyBIOS, wire.StateServicing)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrServicing || s.d.Status.ProvisioningState != wire.StateServicing {
		t.Fatalf("want a servicing error in servicing: %s", s.d)
	}
	s.h.Task = firmwareTask()
	s.intents().Service = nil
	s.now = s.now.Add(DefaultBackoffBase * 2)
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StateServicing) // the flash recorded is followed
	s.h.Task = nil
	s.step(&Outcome{Action: ActionFirmwareUpdate, InProgress: true})
	s.expect(ActionNone, wire.StateProvisioned)
	if hasEvent(s.d, ReasonServiced) {
		t.Fatalf("a withdrawn service reported done: %s", s.d)
	}
}

// TestServiceIntentDroppedUnlessProvisioned: an intent on a host that is
// no longer provisioned is dropped with a Warning, nothing serviced.
func TestServiceIntentDroppedUnlessProvisioned(t *testing.T) {
	h := fullHost()
	h.BIOS = testBIOS
	s := newSim(t, h)
	s.settle()
	s.expect(ActionNone, wire.StateAvailable)
	s.intents().Service = intent(nil)
	s.step(nil)
	if !hasEvent(s.d, "ServiceDropped") || s.h.Intents != nil && s.h.Intents.Service != nil || s.d.Status.ProvisioningState != wire.StateAvailable {
		t.Fatalf("want the intent dropped in available: %s", s.d)
	}
}

// TestFirmwareSettingsPolicy: updatePolicy.firmwareSettings onReboot
// applies a changed spec.bios to a provisioned host when a reboot is
// asked; the settings' power cycle is that reboot (not made twice).
// Without the policy nothing happens.
func TestFirmwareSettingsPolicy(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.BIOS = testBIOS })
	s.intents().Reboot = intent(nil)
	s.step(nil)
	if s.d.Status.ProvisioningState != wire.StateProvisioned || s.d.Action != ActionPowerOff {
		t.Fatalf("without the policy a reboot is a plain reboot: %s", s.d)
	}

	s = provisionedSim(t)
	s.edit(func(h *wire.Host) {
		h.BIOS = testBIOS
		h.UpdatePolicy = &wire.UpdatePolicy{FirmwareSettings: wire.UpdatePolicyOnReboot}
	})
	s.expect(ActionNone, wire.StateProvisioned) // policy, no reboot asked
	s.intents().Reboot = intent(nil)
	s.step(nil)
	s.expect(ActionApplyBIOS, wire.StateServicing)
	s.step(&Outcome{Action: ActionApplyBIOS, ResetNeeded: true})
	s.expect(ActionPowerOff, wire.StateServicing)
	s.ok()
	s.expect(ActionPowerOn, wire.StateServicing)
	s.ok()
	s.expect(ActionVerifyBIOS, wire.StateServicing)
	s.ok()
	s.expect(ActionNone, wire.StateProvisioned)
	if s.h.Intents != nil && s.h.Intents.Reboot != nil || !hasEvent(s.d, "Rebooted") {
		t.Fatalf("want the reboot dropped as done by the BIOS power cycle: %s", s.d)
	}
}
