package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// BenchmarkStepSteady: a provisioned host with nothing to do (the common
// case on every watch event).
func BenchmarkStepSteady(b *testing.B) {
	h := fullHost()
	h.Image = &wire.Image{URL: "http://i"}
	h.Status = &wire.HostStatus{ProvisioningState: wire.StateProvisioned, PoweredOn: true,
		Extra: map[string]string{keyNode: nodeReady}}
	in := Input{Host: h, Now: t0}
	b.ReportAllocs()
	for b.Loop() {
		if d := Step(in); d.Action != ActionNone {
			b.Fatal(d)
		}
	}
}

// BenchmarkLifecycle: new host to provisioned, every action succeeding
// (8 steps).
func BenchmarkLifecycle(b *testing.B) {
	h0 := fullHost()
	h0.Image = &wire.Image{URL: "http://i"}
	b.ReportAllocs()
	for b.Loop() {
		h := h0
		var last *Outcome
		for range 20 {
			d := Step(Input{Host: h, Now: t0, Last: last})
			st := d.Status
			h.Status = &st
			if d.Action == ActionNone {
				break
			}
			last = &Outcome{Action: d.Action}
		}
		if h.Status.ProvisioningState != wire.StateProvisioned {
			b.Fatal(h.Status.ProvisioningState)
		}
	}
}
