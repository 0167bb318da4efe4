package ctl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestHostService drives host service against a real coordinator; the
// fake agent plays the rack agent (servicing, then the drop). The plan and
// its power cycles are printed before anything starts; the refusals name
// the host.
func TestHostService(t *testing.T) {
	c := startCoordinator(t)
	ctx := context.Background()
	c.mustCtl(t, "", "host", "apply", "-f", "testdata/hosts.yaml")
	ag := c.agent(t, "r1", "agent-r1-service")
	prov := wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK, PoweredOn: true}
	ag.report(t, "r1-h01", prov, false)
	ag.report(t, "r1-h03", wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK}, false)

	r := c.ctl(t, "", "host", "service", "r1-h01")
	if r.code != ExitConflict || !strings.Contains(r.stderr, "host r1-h01 has neither spec.bios nor spec.firmware") {
		t.Fatalf("service of a host with nothing to service: %s", r)
	}
	on := true
	for _, n := range []string{"r1-h01", "r1-h03"} {
		h, err := c.admin.GetHost(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		h.BIOS = &wire.BIOSSpec{VirtualizationEnabled: &on}
		h.Firmware = []wire.FirmwareComponent{{Component: "bios", URL: "http://fw.example/u46-2.0.bin"}}
		if _, _, err := c.admin.ApplyHost(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	r = c.ctl(t, "", "host", "service", "r1-h03")
	if r.code != ExitConflict || !strings.Contains(r.stderr, "host r1-h03 is available: only a host that is provisioned or externally-provisioned can be serviced") {
		t.Fatalf("service of an available host: %s", r)
	}
	if r := c.ctl(t, "", "host", "service", "r1-h01", "--reason", strings.Repeat("x", 1025)); r.code != ExitUsage {
		t.Fatalf("a reason too long: %s, want a usage error", r)
	}

	done := make(chan struct{})
	go func() { // the agent services the host, then drops the intent
		defer close(done)
		for i := 0; i < 600; i++ {
			h, err := ag.cl.GetHost(ctx, "r1-h01")
			if err == nil && h.Intents != nil && h.Intents.Service != nil {
				svc := prov
				svc.ProvisioningState = wire.StateServicing
				ag.report(t, "r1-h01", svc, false, func(r *wire.StatusReport) {
					r.Acks = []wire.IntentAck{{Kind: wire.IntentService, CreatedIndex: h.Intents.Service.CreatedIndex}}
				})
				ag.report(t, "r1-h01", prov, false, func(r *wire.StatusReport) {
					r.Acks = []wire.IntentAck{{Kind: wire.IntentService, CreatedIndex: h.Intents.Service.CreatedIndex, Drop: true}}
				})
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	r = c.mustCtl(t, "", "host", "service", "r1-h01", "--wait", "--timeout", "60s")
	<-done
	for _, want := range []string{"r1-h01: service requested", "r1-h01: plan: BIOS: 1 setting(s) of spec.bios",
		"firmware: bios flashed", "at most 1 power cycle(s)", "service done: 1 host(s) serviced"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("host service --wait does not say %q: %s", want, r)
		}
	}
	h, err := c.admin.GetHost(ctx, "r1-h01")
	if err != nil {
		t.Fatal(err)
	}
	if h.Intents != nil && h.Intents.Service != nil {
		t.Fatalf("service intent left after the drop: %+v", h.Intents.Service)
	}
}
