package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

var testFirmware = []wire.FirmwareComponent{{Component: "bmc", URL: "http://fw/bmc-2.bin", Version: "2"}}

func firmwareTask() *wire.BMCTask {
	return &wire.BMCTask{Kind: wire.BMCTaskFirmware, Component: "bmc", TaskURI: "/redfish/v1/TaskService/Tasks/7", Epoch: 3}
}

func TestFirmwareOfAvailableHostWhilePreparing(t *testing.T) {
	h := fullHost()
	s := newSim(t, h)
	s.settle()
	s.expect(ActionNone, wire.StateAvailable)
	s.edit(func(h *wire.Host) { h.Firmware = testFirmware })
	s.expect(ActionFirmwareUpdate, wire.StatePreparing)
	s.step(&Outcome{Action: ActionFirmwareUpdate, InProgress: true})
	s.expect(ActionNone, wire.StatePreparing)
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StatePreparing)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrPreparation || s.d.Status.ProvisioningState != wire.StatePreparing {
		t.Fatalf("want a preparation error in preparing: %s", s.d)
	}
	s.now = s.now.Add(DefaultBackoffBase * 2)
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StatePreparing)
	s.ok()
	s.expect(ActionNone, wire.StateAvailable)
	if s.d.Status.ErrorType != "" || !hasEvent(s.d, "FirmwareUpdated") {
		t.Fatalf("want back to available, no error: %s", s.d)
	}
	// Done: the same spec does not service again; a new version does.
	s.step(nil)
	s.expect(ActionNone, wire.StateAvailable)
	s.edit(func(h *wire.Host) {
		h.Firmware = []wire.FirmwareComponent{{Component: "bmc", URL: "http://fw/bmc-3.bin", Version: "3"}}
	})
	s.expect(ActionFirmwareUpdate, wire.StatePreparing)
}

func TestFirmwareBeforeProvisioning(t *testing.T) {
	h := fullHost()
	h.Firmware = testFirmware
	h.Image = &wire.Image{URL: "http://i"}
	s := newSim(t, h)
	for s.d.Action != ActionFirmwareUpdate {
		if s.d.Action == ActionProvision {
			t.Fatalf("provisioned before the firmware update: %s", s.d)
		}
		s.ok()
	}
	s.ok()
	s.expect(ActionProvision, wire.StateProvisioning)
}

func TestServicingProvisionedHostOnlyOnRebootWithPolicy(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.Firmware = testFirmware })
	s.expect(ActionNone, wire.StateProvisioned) // no policy: never on a provisioned host
	s.edit(func(h *wire.Host) { h.UpdatePolicy = &wire.UpdatePolicy{FirmwareUpdates: wire.UpdatePolicyOnReboot} })
	s.expect(ActionNone, wire.StateProvisioned) // policy, no reboot asked
	s.intents().Reboot = intent(nil)
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StateServicing)
	s.ok()
	// Back to provisioned, the reboot that let it run follows.
	if s.d.Status.ProvisioningState != wire.StateProvisioned || (s.d.Action != ActionPowerOff && s.d.Action != ActionSoftPowerOff) {
		t.Fatalf("want the reboot's power-off in provisioned: %s", s.d)
	}
}

func TestRecordedFirmwareTaskIsFollowed(t *testing.T) {
	// A new agent finds a task recorded (spec already marked done, or
	// firmware removed): it follows the task, it never leaves it running.
	s := provisionedSim(t)
	s.h.Task = firmwareTask()
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StateServicing)
	if !hasEvent(s.d, "FirmwareTaskFollowed") {
		t.Fatalf("want FirmwareTaskFollowed: %s", s.d)
	}
	s.step(&Outcome{Action: ActionFirmwareUpdate, InProgress: true})
	s.h.Task = nil // the agent ended the record
	s.step(nil)
	s.expect(ActionNone, wire.StateProvisioned)
}

func TestPowerHeldWhileFirmwareTaskRecorded(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(h *wire.Host)
		want Action
	}{
		{"power off", func(h *wire.Host) { h.Online = false }, ActionPowerOff},
		{"deprovision", func(h *wire.Host) { h.Image = nil }, ActionDeprovision},
		{"delete", func(h *wire.Host) { h.DeletionRequested = true }, ActionDeprovision},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := provisionedSim(t)
			s.edit(tc.edit)
			if s.d.Action != tc.want {
				t.Fatalf("setup: want %s without a task: %s", tc.want, s.d)
			}
			// The same host with a firmware task recorded, not (yet) in
			// servicing: whatever the state, no power change.
			s = provisionedSim(t)
			s.h.Task = firmwareTask()
			s.h.Status.Extra[keyNode] = nodeEnrolled // not servicing: adopt first
			s.edit(tc.edit)
			for i := 0; i < 10 && s.d.Action != ActionNone; i++ {
				if powerAction(s.d.Action) {
					t.Fatalf("%s while a firmware task is recorded: %s", s.d.Action, s.d)
				}
				s.ok()
			}
			if powerAction(s.d.Action) {
				t.Fatalf("power action: %s", s.d)
			}
			s.h.Task = nil
			s.step(nil)
			for i := 0; i < 10 && s.d.Action != tc.want; i++ {
				s.ok()
			}
			if s.d.Action != tc.want {
				t.Fatalf("after the record ended want %s: %s", tc.want, s.d)
			}
		})
	}
}
