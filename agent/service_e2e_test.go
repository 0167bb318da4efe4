package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestServiceIntent: real coordinator, agent and bmcsim (iLO). A
// provisioned host whose spec.bios and spec.firmware changed (no update
// policy: nothing happens) is serviced on request: the answer states the
// power cycles, the agent flashes the BMC, then applies the BIOS setting
// with one power cycle (none during the flash), and the host is back in
// provisioned with the intent dropped. A host with nothing to service is
// refused by name.
func TestServiceIntent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator, bmcsim and an agent")
	}
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--profile", "ilo"}})
	putKnobs(t, e, `{"speed": 600, "brickOnPowerChange": true}`)
	h := prepHost(e, "svc0", "ilo")
	h.Image = &wire.Image{URL: "http://images.example/ubuntu.iso", Checksum: "sha256:00"}
	e.apply(h)
	e.startAgent("r1", "a1", "--poll-interval", "1s")
	e.waitHost("svc0", 120*time.Second, "provisioned", stateIs(wire.StateProvisioned, wire.OpOK))

	if _, err := e.admin.Service(ctx(t), "svc0", wire.IntentRequest{}); !client.IsConflict(err) || !strings.Contains(err.Error(), "host svc0 has neither spec.bios nor spec.firmware") {
		t.Fatalf("service of a host with nothing to service: %v", err)
	}
	off := false
	h = e.host("svc0")
	h.BIOS = &wire.BIOSSpec{SimultaneousMultithreadingEnabled: &off}
	h.Firmware = []wire.FirmwareComponent{{Component: wire.ComponentBMC, URL: "http://images.example/fw/ilo5_310.bin", Version: "ilo5_310"}}
	e.apply(h)
	st, err := e.simState(0)
	if err != nil {
		t.Fatal(err)
	}
	checkBIOS(t, st, map[string]string{"ProcHyperthreading": "Enabled"}) // no policy: untouched

	askedAt := time.Now()
	in, err := e.admin.Service(ctx(t), "svc0", wire.IntentRequest{Reason: "baseline"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Plan == nil || in.Plan.PowerCycles != 1 || !strings.Contains(in.Plan.Message, "at most 1 power cycle") {
		t.Fatalf("the answer does not state the power cycles: %+v", in.Plan)
	}
	got := e.waitHost("svc0", 180*time.Second, "serviced and back to provisioned", func(h *wire.Host) error {
		if err := stateIs(wire.StateProvisioned, wire.OpOK)(h); err != nil {
			return err
		}
		if h.Intents != nil && h.Intents.Service != nil {
			return errString("service intent still there")
		}
		return nil
	})
	if !got.Status.PoweredOn || got.Task != nil {
		t.Errorf("after servicing: powered on %t, task %+v", got.Status.PoweredOn, got.Task)
	}
	st, err = e.simState(0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bricked {
		t.Fatalf("board bricked")
	}
	checkBIOS(t, st, map[string]string{"ProcHyperthreading": "Disabled"})
	for _, f := range st.Firmware {
		if f.Name == "iLO 5" && f.Version != "ilo5_310" {
			t.Errorf("iLO 5 at %q, want ilo5_310", f.Version)
		}
	}
	updates, resets := 0, 0
	for _, l := range e.auditLines(0) {
		at, err := time.Parse(time.RFC3339Nano, l.Time)
		if err != nil || at.Before(askedAt) {
			continue
		}
		if l.UpdateRunning != "" {
			t.Errorf("power change while the update ran: %s %s", l.Method, l.Path)
		}
		if strings.Contains(l.Path, "ComputerSystem.Reset") {
			resets++
		}
		if l.Task != "" && strings.Contains(l.Path, "Update") {
			updates++
		}
	}
	// One power cycle: a power-off and a power-on.
	if updates != 1 || resets != 2 {
		t.Errorf("%d updates and %d resets after the request, want 1 and 2 (one power cycle)", updates, resets)
	}
	evs, err := e.admin.Events(ctx(t), "svc0")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, ev := range evs.Items {
		seen[ev.Reason] = ev.Message
	}
	if m := seen["ServicingStarted"]; !strings.Contains(m, "at most 1 power cycle") {
		t.Errorf("ServicingStarted %q does not state the power cycles (events %v)", m, seen)
	}
	for _, r := range []string{"Serviced", "FirmwareUpdated", "BIOSSettingsVerified"} {
		if _, ok := seen[r]; !ok {
			t.Errorf("no %s event (events %v)", r, seen)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
