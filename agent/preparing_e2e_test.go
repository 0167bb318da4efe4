package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestPreparing: real coordinator, agent and bmcsim per profile. A host
// with spec.raid and spec.bios goes registering → inspecting → preparing
// (volumes built and read back, BIOS PATCHed, reset, read back) →
// available, and the BMC shows what the spec asked. Faults on the way
// stop in a preparation error naming the attribute or controller, with
// the BMC's message; resume or an edit gets it going again.
func TestPreparing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator, bmcsim and an agent per profile")
	}
	off, on := false, true
	t.Run("ilo", func(t *testing.T) {
		e, name := prepEnv(t, "ilo")
		h := prepHost(e, name, "ilo")
		// The BIOS refuses one setting at the reset: the error names it
		// with the BMC's message, and a resume once it is fixed goes on.
		putKnobs(t, e, `{"biosRejects": ["WorkloadProfile"]}`)
		h.BIOS = &wire.BIOSSpec{SimultaneousMultithreadingEnabled: &off,
			Settings: map[string]string{"WorkloadProfile": "Virtualization-MaxPerformance"}}
		h.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Name: "os", Level: "1"}}}
		e.apply(h)
		e.startAgent("r1", "a1", "--poll-interval", "1s")
		bad := waitPrepError(e, name, "WorkloadProfile")
		if d := bad.Status.DayTwo; d == nil || d.BIOS == nil || len(d.BIOS.NotApplied) != 1 || d.BIOS.NotApplied[0].Name != "WorkloadProfile" || d.BIOS.NotApplied[0].Message == "" {
			t.Errorf("status.dayTwo.bios does not name the setting that did not take with the BMC's message: %+v", bad.Status.DayTwo)
		}
		putKnobs(t, e, `{"biosRejects": []}`)
		if _, err := e.admin.Resume(ctx(t), name, wire.IntentRequest{}); err != nil {
			t.Fatal(err)
		}
		got := e.waitHost(name, 120*time.Second, "available after the resume", stateIs(wire.StateAvailable, wire.OpOK))
		d := got.Status.DayTwo
		if d == nil || d.BIOS == nil || d.BIOS.Settings["ProcHyperthreading"] != "Disabled" || len(d.BIOS.NotApplied) != 0 || d.BIOS.LastApplied.IsZero() ||
			len(d.HardwareRAIDVolumes) != 1 || d.HardwareRAIDVolumes[0].Level != "1" {
			t.Errorf("status.dayTwo %+v: want the BIOS values, no setting left, and one RAID1 volume", d)
		}
		st, err := e.simState(0)
		if err != nil {
			t.Fatal(err)
		}
		checkBIOS(t, st, map[string]string{"ProcHyperthreading": "Disabled", "WorkloadProfile": "Virtualization-MaxPerformance"})
		checkVolumes(t, st, "RAID1", 1)
	})
	t.Run("idrac", func(t *testing.T) {
		e, name := prepEnv(t, "idrac")
		h := prepHost(e, name, "idrac")
		// An attribute the registry does not have is named before
		// anything is sent; a level the controller cannot build names it.
		h.BIOS = &wire.BIOSSpec{Settings: map[string]string{"NoSuchKnob": "Enabled"}}
		e.apply(h)
		e.startAgent("r1", "a1", "--poll-interval", "1s")
		waitPrepError(e, name, "NoSuchKnob")
		h = e.host(name)
		h.BIOS = &wire.BIOSSpec{SimultaneousMultithreadingEnabled: &off, SRIOVEnabled: &on}
		h.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1", Controller: "RAID.Integrated.1-1"}}}
		e.apply(h)
		e.waitHost(name, 120*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
		st, err := e.simState(0)
		if err != nil {
			t.Fatal(err)
		}
		checkBIOS(t, st, map[string]string{"LogicalProc": "Disabled", "SriovGlobalEnable": "Enabled"})
		checkVolumes(t, st, "RAID1", 1)
	})
	t.Run("openbmc", func(t *testing.T) {
		e, name := prepEnv(t, "openbmc")
		h := prepHost(e, name, "openbmc")
		// bmcweb's BIOS config manager has no vendor names for the named
		// switches, and its NVMe storage builds no RAID: both refused by
		// name; the registry's own attribute names work.
		h.BIOS = &wire.BIOSSpec{VirtualizationEnabled: &on}
		e.apply(h)
		e.startAgent("r1", "a1", "--poll-interval", "1s")
		waitPrepError(e, name, "no fixed BIOS attribute names")
		h = e.host(name)
		h.BIOS = &wire.BIOSSpec{Settings: map[string]string{"pvm_stop_at_standby": "Enabled"}}
		h.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1"}}}
		e.apply(h)
		waitPrepError(e, name, "no storage controller of this system builds RAID1")
		h = e.host(name)
		h.RAID = nil // clearing the desired change abandons it
		e.apply(h)
		e.waitHost(name, 120*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
		st, err := e.simState(0)
		if err != nil {
			t.Fatal(err)
		}
		checkBIOS(t, st, map[string]string{"pvm_stop_at_standby": "Enabled"})
	})
	t.Run("software RAID refused", func(t *testing.T) {
		e, name := prepEnv(t, "ilo")
		h := prepHost(e, name, "ilo")
		h.RAID = &wire.RAIDSpec{SoftwareRAIDVolumes: []wire.SoftwareRAIDVolume{{Level: "1"}}}
		e.apply(h)
		e.startAgent("r1", "a1", "--poll-interval", "1s")
		waitPrepError(e, name, "raid.softwareRAIDVolumes")
	})
}

// prepSystems is each profile's system path.
var prepSystems = map[string]string{"ilo": "1", "idrac": "System.Embedded.1", "openbmc": "system"}

func prepEnv(t *testing.T, profile string) (*env, string) {
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--profile", profile}})
	// Volume jobs and the like in a fraction of a second.
	putKnobs(t, e, `{"speed": 600}`)
	return e, "prep-" + profile
}

// prepHost is the spec of the host on BMC 0, at the profile's system.
func prepHost(e *env, name, profile string) *wire.Host {
	h := e.hostSpec(name, "r1", 0)
	h.BMC.Address = strings.TrimSuffix(h.BMC.Address, "/Systems/1") + "/Systems/" + prepSystems[profile]
	return h
}

func waitPrepError(e *env, name, want string) *wire.Host {
	e.t.Helper()
	return e.waitHost(name, 120*time.Second, "a preparation error naming "+want, func(h *wire.Host) error {
		st := h.Status
		if st == nil || st.ProvisioningState != wire.StatePreparing || st.ErrorType != wire.ErrPreparation || !strings.Contains(st.ErrorMessage, want) {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}

func checkBIOS(t *testing.T, st bmcsim.State, want map[string]string) {
	t.Helper()
	if len(st.Bios) == 0 {
		t.Fatalf("the BMC shows no BIOS")
	}
	for k, v := range want {
		if got := fmt.Sprint(st.Bios[0].Attributes[k]); got != v {
			t.Errorf("BIOS %s = %q, want %q (attributes %v, pending %v)", k, got, v, st.Bios[0].Attributes, st.Bios[0].Pending)
		}
	}
}

func checkVolumes(t *testing.T, st bmcsim.State, raid string, n int) {
	t.Helper()
	got := 0
	for _, v := range st.Volumes {
		if v.RAIDType == raid && v.Ready {
			got++
		}
	}
	if got != n || len(st.Volumes) != n {
		t.Errorf("volumes %+v, want %d ready %s", st.Volumes, n, raid)
	}
}
