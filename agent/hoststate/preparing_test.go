package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

var (
	testBIOS = &wire.BIOSSpec{Settings: map[string]string{"ProcTurboMode": "Disabled"}}
	testRAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1"}}}
)

// preparedHost is an available host (node ready, powered on) before any
// day-two spec.
func preparedSim(t *testing.T) *sim {
	t.Helper()
	s := newSim(t, fullHost())
	s.settle()
	s.expect(ActionNone, wire.StateAvailable)
	if !s.d.Status.PoweredOn {
		t.Fatalf("setup: want the host on: %s", s.d)
	}
	return s
}

func TestPreparingOrderBeforeProvisioning(t *testing.T) {
	h := fullHost()
	h.RAID, h.BIOS, h.Firmware = testRAID, testBIOS, testFirmware
	h.Image = &wire.Image{URL: "http://i"}
	s := newSim(t, h)
	var seen []Action
	for i := 0; s.d.Action != ActionProvision; i++ {
		if i > 30 {
			t.Fatalf("never provisions: %v, %s", seen, s.d)
		}
		if s.d.Status.ProvisioningState == wire.StatePreparing {
			seen = append(seen, s.d.Action)
		}
		if s.d.Action == ActionApplyBIOS {
			s.step(&Outcome{Action: ActionApplyBIOS, ResetNeeded: true})
			continue
		}
		s.ok()
	}
	want := []Action{ActionBuildRAID, ActionApplyBIOS, ActionPowerOn, ActionVerifyBIOS, ActionFirmwareUpdate}
	if len(seen) != len(want) {
		t.Fatalf("preparing ran %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("preparing ran %v, want %v", seen, want)
		}
	}
	s.expect(ActionProvision, wire.StateProvisioning)
}

func TestPreparingBIOSResetOfARunningHost(t *testing.T) {
	s := preparedSim(t)
	s.edit(func(h *wire.Host) { h.BIOS = testBIOS })
	s.expect(ActionApplyBIOS, wire.StatePreparing)
	s.step(&Outcome{Action: ActionApplyBIOS, ResetNeeded: true})
	s.expect(ActionPowerOff, wire.StatePreparing)
	s.ok()
	s.expect(ActionPowerOn, wire.StatePreparing)
	s.ok()
	s.expect(ActionVerifyBIOS, wire.StatePreparing)
	s.ok()
	s.expect(ActionNone, wire.StateAvailable)
	if !hasEvent(s.d, "BIOSSettingsVerified") {
		t.Fatalf("want BIOSSettingsVerified: %s", s.d)
	}
	// The same spec again: nothing to do; nothing changed needs no reset.
	s.step(nil)
	s.expect(ActionNone, wire.StateAvailable)
	s.edit(func(h *wire.Host) { h.BIOS = &wire.BIOSSpec{Settings: map[string]string{"ProcTurboMode": "Enabled"}} })
	s.expect(ActionApplyBIOS, wire.StatePreparing)
	s.ok() // ResetNeeded false: already at the value
	s.expect(ActionVerifyBIOS, wire.StatePreparing)
}

func TestPreparingBIOSNotTakenResumeAndAbort(t *testing.T) {
	s := preparedSim(t)
	s.edit(func(h *wire.Host) { h.BIOS = testBIOS })
	s.step(&Outcome{Action: ActionApplyBIOS, ResetNeeded: true})
	s.ok() // power off
	s.ok() // power on
	s.expect(ActionVerifyBIOS, wire.StatePreparing)
	s.step(&Outcome{Action: ActionVerifyBIOS, Err: ErrClassFailed, Message: `ProcTurboMode is "Enabled", wanted "Disabled" (the BMC says rejected)`})
	st := s.d.Status
	if st.ProvisioningState != wire.StatePreparing || st.ErrorType != wire.ErrPreparation || s.d.Action != ActionNone {
		t.Fatalf("want a preparation error resting in preparing: %s", s.d)
	}
	if !hasEvent(s.d, "PreparationError") {
		t.Fatalf("want a PreparationError event: %s", s.d)
	}
	// resume retries at once, from the apply.
	s.intents().Resume = intent(nil)
	s.step(nil)
	s.expect(ActionApplyBIOS, wire.StatePreparing)
	s.fail(ErrClassFailed)
	if s.d.Status.ErrorType != wire.ErrPreparation {
		t.Fatalf("want a preparation error: %s", s.d)
	}
	// Clearing the desired change abandons it: available, error cleared.
	s.edit(func(h *wire.Host) { h.BIOS = nil })
	s.expect(ActionNone, wire.StateAvailable)
	if s.d.Status.ErrorType != "" {
		t.Fatalf("want the error cleared once nothing is left: %s", s.d)
	}
}

func TestPreparingHoldsPowerWhileFirmwareTaskRecorded(t *testing.T) {
	s := preparedSim(t)
	s.edit(func(h *wire.Host) { h.BIOS = testBIOS; h.Firmware = testFirmware })
	s.step(&Outcome{Action: ActionApplyBIOS, ResetNeeded: true})
	s.expect(ActionPowerOff, wire.StatePreparing)
	// A flash recorded (a lease holder before us started it): followed
	// first, never a power change meanwhile.
	s.h.Task = firmwareTask()
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StatePreparing)
	s.step(&Outcome{Action: ActionFirmwareUpdate, InProgress: true})
	if powerAction(s.d.Action) {
		t.Fatalf("power action while the flash runs: %s", s.d)
	}
	s.h.Task = nil
	s.step(nil)
	s.expect(ActionPowerOff, wire.StatePreparing)
}

func TestPreparingOnlyForAvailableHosts(t *testing.T) {
	s := provisionedSim(t)
	s.edit(func(h *wire.Host) { h.BIOS = testBIOS; h.RAID = testRAID })
	s.expect(ActionNone, wire.StateProvisioned)
}

func TestDeletionAbandonsPreparing(t *testing.T) {
	s := preparedSim(t)
	s.edit(func(h *wire.Host) { h.RAID = testRAID })
	s.expect(ActionBuildRAID, wire.StatePreparing)
	s.fail(ErrClassFailed)
	s.h.DeletionRequested = true
	s.step(nil)
	s.expect(ActionPowerOff, wire.StatePoweringOffBeforeDelete)
}

func TestDeletionWaitsForFirmwareTaskWhilePreparing(t *testing.T) {
	s := preparedSim(t)
	s.edit(func(h *wire.Host) { h.Firmware = testFirmware })
	s.expect(ActionFirmwareUpdate, wire.StatePreparing)
	s.h.Task = firmwareTask()
	s.h.DeletionRequested = true
	s.step(nil)
	s.expect(ActionFirmwareUpdate, wire.StatePreparing)
}

func TestDayTwoStatusLearntPartByPart(t *testing.T) {
	s := preparedSim(t)
	s.edit(func(h *wire.Host) { h.RAID = testRAID; h.BIOS = testBIOS })
	vols := []wire.HardwareRAIDVolume{{Level: "1", Controller: "c0"}}
	s.step(&Outcome{Action: ActionBuildRAID, DayTwo: &wire.DayTwoStatus{HardwareRAIDVolumes: vols}})
	s.step(&Outcome{Action: ActionApplyBIOS})
	bios := &wire.BIOSStatus{Settings: map[string]string{"ProcTurboMode": "Disabled"}, LastApplied: t0}
	s.step(&Outcome{Action: ActionVerifyBIOS, DayTwo: &wire.DayTwoStatus{BIOS: bios}})
	d := s.d.Status.DayTwo
	if d == nil || len(d.HardwareRAIDVolumes) != 1 || d.BIOS == nil || d.BIOS.Settings["ProcTurboMode"] != "Disabled" {
		t.Fatalf("want volumes and BIOS both kept: %+v", d)
	}
	vols[0].Level = "0"
	if d.HardwareRAIDVolumes[0].Level != "1" {
		t.Fatal("the status shares the outcome's slice")
	}
}
