package fsm

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// serviceHost is h1 with a BIOS setting and two firmware components,
// reported in state under a lease.
func serviceHost(t *testing.T, state string) (*fsmT, wire.Lease) {
	h, l := opHost(t, state)
	hst, _ := h.f.Host("h1")
	hs := hst
	on := true
	hs.BIOS = &wire.BIOSSpec{VirtualizationEnabled: &on, Settings: map[string]string{"ProcTurboMode": "Enabled"}}
	hs.Firmware = []wire.FirmwareComponent{{Component: "bmc", URL: "http://fw/bmc.bin"}, {Component: "bios", URL: "http://fw/bios.bin"}}
	hs.Status, hs.Intents, hs.Task = nil, nil, nil
	h.ok(PutHostCmd{Host: hs})
	return h, l
}

// TestServiceIntent: a provisioned host takes a service intent that
// states its plan (what it will do, the power cycles it costs), written
// as body version 2; the agent's ack drops it, and a withdrawal before it
// ran removes it.
func TestServiceIntent(t *testing.T) {
	h, l := serviceHost(t, wire.StateProvisioned)
	c := PutOperationIntentCmd{Name: "h1", Kind: wire.IntentService, Intent: wire.Intent{Actor: "op", Reason: "baseline"}}
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if b[1] != operationServiceVersion {
		t.Fatalf("a service intent is body version %d, want %d", b[1], operationServiceVersion)
	}
	if b, _ := Encode(PutOperationIntentCmd{Name: "h1", Kind: wire.IntentReboot}); b[1] != bodyJSON {
		t.Fatalf("a reboot intent is body version %d, want %d (unchanged)", b[1], bodyJSON)
	}
	in := h.ok(c).(wire.Intent)
	if in.CreatedIndex == 0 || in.Plan == nil || in.Plan.PowerCycles != 1 || in.Plan.BIOS != 2 || strings.Join(in.Plan.Firmware, ",") != "bmc,bios" {
		t.Fatalf("service intent %+v plan %+v", in, in.Plan)
	}
	for _, want := range []string{"at most 1 power cycle", "bmc, bios", "no power change while a flash runs"} {
		if !strings.Contains(in.Plan.Message, want) {
			t.Errorf("plan %q does not say %q", in.Plan.Message, want)
		}
	}
	if got, _ := h.f.Host("h1"); got.Intents == nil || got.Intents.Service == nil || got.Intents.Service.Plan == nil {
		t.Fatalf("service intent not stored: %+v", got.Intents)
	}
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch,
		Status: wire.HostStatus{ProvisioningState: wire.StateProvisioned}, Acks: []wire.IntentAck{{Kind: wire.IntentService, CreatedIndex: in.CreatedIndex, Drop: true}}}})
	if got, _ := h.f.Host("h1"); got.Intents != nil {
		t.Fatalf("service intent not dropped: %+v", got.Intents)
	}
	h.ok(c)
	d := DeleteOperationIntentCmd{Name: "h1", Kind: wire.IntentService}
	if b, _ := Encode(d); b[1] != operationServiceVersion {
		t.Fatalf("a service withdrawal is body version %d", b[1])
	}
	h.ok(d)
	if got, _ := h.f.Host("h1"); got.Intents != nil {
		t.Fatalf("service intent not withdrawn: %+v", got.Intents)
	}
	// Firmware only: no power cycle.
	hst, _ := h.f.Host("h1")
	hst.BIOS, hst.Status, hst.Intents = nil, nil, nil
	h.ok(PutHostCmd{Host: hst})
	if in := h.ok(c).(wire.Intent); in.Plan.PowerCycles != 0 || !strings.Contains(in.Plan.Message, "at most 0 power cycle") {
		t.Fatalf("firmware-only plan %+v", in.Plan)
	}
}

// TestServiceIntentRefused: each refusal names the host and says what to
// do: not provisioned, detached, drained, a BMC task running, nothing to
// service.
func TestServiceIntentRefused(t *testing.T) {
	svc := PutOperationIntentCmd{Name: "h1", Kind: wire.IntentService}
	check := func(e *Error, wants ...string) {
		t.Helper()
		for _, w := range append(wants, "host h1") {
			if !strings.Contains(e.Message, w) {
				t.Errorf("refusal %q does not say %q", e.Message, w)
			}
		}
	}
	for _, st := range []string{wire.StateAvailable, wire.StateProvisioning, wire.StateServicing} {
		h, _ := serviceHost(t, st)
		check(h.refused(svc, wire.CodeConflict), "is "+st, "provisioned or externally-provisioned")
	}
	h, _ := serviceHost(t, wire.StateExternallyProvisioned)
	h.ok(svc)

	h, l := serviceHost(t, wire.StateProvisioned)
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{}})
	check(h.refused(svc, wire.CodeConflict), "detached", "attach it first")
	h.ok(DeleteIntentCmd{Name: "h1", Kind: wire.IntentDetach})
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDrain, Intent: wire.Intent{Mode: wire.DrainMaintenance}})
	check(h.refused(svc, wire.CodeConflict), "drained", "restore it first")
	h.ok(DeleteIntentCmd{Name: "h1", Kind: wire.IntentDrain})

	hst, _ := h.f.Host("h1")
	h.ok(startFirmware(l.Epoch, hst.CreatedIndex))
	check(h.refused(svc, wire.CodeBMCTaskRunning), "BMC task running", "/redfish/v1/TaskService/Tasks/7", "wait")

	h, _ = opHost(t, wire.StateProvisioned)
	check(h.refused(svc, wire.CodeConflict), "neither spec.bios nor spec.firmware")
	if got, _ := h.f.Host("h1"); got.Intents != nil {
		t.Fatalf("a refused intent was stored: %+v", got.Intents)
	}
}
