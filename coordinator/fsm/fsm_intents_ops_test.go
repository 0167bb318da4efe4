package fsm

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// opHost creates h1 in rack r1 and reports it in state under a lease.
func opHost(t *testing.T, state string) (*fsmT, wire.Lease) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(wire.Lease)
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{ProvisioningState: state}}})
	return h, l
}

func TestRebootIntentAckAndDrop(t *testing.T) {
	h, l := opHost(t, wire.StateProvisioned)
	in := h.ok(PutOperationIntentCmd{Name: "h1", Kind: wire.IntentReboot, Intent: wire.Intent{Mode: wire.RebootSoft, Actor: "op", Acknowledged: true}}).(wire.Intent)
	if in.CreatedIndex == 0 || in.Acknowledged || in.Mode != wire.RebootSoft {
		t.Fatalf("reboot intent: %+v", in)
	}
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch,
		Status: wire.HostStatus{ProvisioningState: wire.StateProvisioned}, Acks: []wire.IntentAck{{Kind: wire.IntentReboot, CreatedIndex: in.CreatedIndex, Drop: true}}}})
	if got, _ := h.f.Host("h1"); got.Intents != nil {
		t.Fatalf("reboot not dropped: %+v", got.Intents)
	}
}

func TestPowerOffHoldsByRequester(t *testing.T) {
	h, l := opHost(t, wire.StateAvailable)
	a := h.ok(PutOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Intent: wire.Intent{Mode: wire.RebootHard, Requester: "a"}}).(wire.Intent)
	b := h.ok(PutOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Intent: wire.Intent{Mode: wire.RebootSoft, Requester: "b"}}).(wire.Intent)
	// The same request again changes nothing (no new index).
	a2 := h.ok(PutOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Intent: wire.Intent{Mode: wire.RebootHard, Requester: "a"}}).(wire.Intent)
	if a2.CreatedIndex != a.CreatedIndex {
		t.Fatalf("repeated hold got a new index: %d vs %d", a2.CreatedIndex, a.CreatedIndex)
	}
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch,
		Status: wire.HostStatus{ProvisioningState: wire.StateAvailable}, Acks: []wire.IntentAck{{Kind: wire.IntentPowerOff, CreatedIndex: b.CreatedIndex}}}})
	got, _ := h.f.Host("h1")
	if len(got.Intents.PowerOff) != 2 || got.Intents.PowerOff["a"].Acknowledged || !got.Intents.PowerOff["b"].Acknowledged ||
		got.Intents.PowerOff["b"].AckEpoch != l.Epoch {
		t.Fatalf("holds after ack: %+v", got.Intents.PowerOff)
	}

	// Snapshots keep the holds.
	var buf bytes.Buffer
	if err := h.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	g := NewFSM()
	if err := g.Restore(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if !sameState(g.s, h.f.s) {
		t.Fatalf("restored state differs:\n got %+v\nwant %+v", g.s.Hosts["h1"].Intents, h.f.s.Hosts["h1"].Intents)
	}

	h.ok(DeleteOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Requester: "a"})
	h.ok(DeleteOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Requester: "nobody"}) // nothing to withdraw: fine
	got, _ = h.f.Host("h1")
	if len(got.Intents.PowerOff) != 1 || got.Intents.PowerOff["b"] == nil {
		t.Fatalf("after withdrawing a: %+v", got.Intents.PowerOff)
	}
	h.ok(DeleteOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Requester: "b"})
	if got, _ = h.f.Host("h1"); got.Intents != nil {
		t.Fatalf("no holds left, intents still %+v", got.Intents)
	}
	// The restored copy was not changed by the withdrawals (no shared map).
	if len(g.s.Hosts["h1"].Intents.PowerOff) != 2 {
		t.Fatalf("restored copy shares the holds map: %+v", g.s.Hosts["h1"].Intents.PowerOff)
	}
}

func TestOperationIntentsRefused(t *testing.T) {
	for _, c := range []struct {
		name, state, kind string
		prep              func(h *fsmT)
		want              string
	}{
		{"reboot while provisioning", wire.StateProvisioning, wire.IntentReboot, nil, "is provisioning"},
		{"reboot before registration", "", wire.IntentReboot, nil, "not been registered"},
		{"inspect when provisioned", wire.StateProvisioned, wire.IntentInspect, nil, "only an available host"},
		{"power-off while inspecting", wire.StateInspecting, wire.IntentPowerOff, nil, "is inspecting"},
		{"reboot while detached", wire.StateProvisioned, wire.IntentReboot, func(h *fsmT) {
			h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach})
		}, "detached"},
		{"inspect while drained", wire.StateAvailable, wire.IntentInspect, func(h *fsmT) {
			h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDrain, Intent: wire.Intent{Mode: wire.DrainMaintenance}})
		}, "drained"},
		{"reboot of an offline host", wire.StateProvisioned, wire.IntentReboot, func(h *fsmT) {
			off := host("h1", "r1")
			off.Online = false
			h.ok(PutHostCmd{Host: off})
		}, "online: false"},
		{"reboot while being deleted", wire.StateProvisioned, wire.IntentReboot, func(h *fsmT) {
			h.ok(DeleteHostCmd{Name: "h1"})
		}, "being deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _ := opHost(t, c.state)
			if c.prep != nil {
				c.prep(h)
			}
			e := h.refused(PutOperationIntentCmd{Name: "h1", Kind: c.kind, Intent: wire.Intent{Mode: wire.RebootHard, Requester: "x"}}, wire.CodeConflict)
			if !strings.Contains(e.Message, c.want) {
				t.Fatalf("refusal %q does not say %q", e.Message, c.want)
			}
		})
	}
	// A power-off of an offline host is fine (it stays off anyway).
	h, _ := opHost(t, wire.StateProvisioned)
	off := host("h1", "r1")
	off.Online = false
	h.ok(PutHostCmd{Host: off})
	h.ok(PutOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Intent: wire.Intent{Requester: "x"}})
	h.refused(PutOperationIntentCmd{Name: "nope", Kind: wire.IntentReboot}, wire.CodeNotFound)
	h.refused(PutOperationIntentCmd{Name: "h1", Kind: "dance"}, wire.CodeBadRequest)
	h.refused(PutOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff}, wire.CodeBadRequest) // no requester
}

// The new command types decode as themselves (and only from their own
// type byte); an older binary refuses them (ErrUnknownCommand) rather than
// applying them as something else.
func TestOperationIntentCommandsEncode(t *testing.T) {
	for _, c := range []Command{
		PutOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Intent: wire.Intent{Requester: "k", Mode: wire.RebootSoft}},
		DeleteOperationIntentCmd{Name: "h1", Kind: wire.IntentPowerOff, Requester: "k"},
	} {
		b, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if b[1] != bodyJSON {
			t.Fatalf("%T written as body version %d, want 1 (JSON)", c, b[1])
		}
		got, err := Decode(b)
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Fatalf("%T round trip: %+v, %v", c, got, err)
		}
	}
}

// A refused operation intent says what to do about the state the host is
// in, and nothing that does not follow from it.
func TestOperationRefusalFollowsFromState(t *testing.T) {
	for _, c := range []struct {
		state, kind string
		want, not   string
	}{
		{wire.StateProvisioned, wire.IntentInspect, "remove spec.image", "wait for the current operation"},
		{wire.StateExternallyProvisioned, wire.IntentInspect, "installed without rackfence", "deprovision"},
		{wire.StateUnmanaged, wire.IntentInspect, "no BMC details: give it spec.bmc", "deprovision"},
		{wire.StateUnmanaged, wire.IntentReboot, "no BMC details: give it spec.bmc", "wait for the current operation"},
		{wire.StateRegistering, wire.IntentInspect, "wait for the current operation (registering)", "deprovision"},
		{wire.StateDeprovisioning, wire.IntentPowerOff, "wait for the current operation (deprovisioning)", "BMC details"},
		{wire.StateInspecting, wire.IntentInspect, "being inspected now", "deprovision"},
	} {
		h, _ := opHost(t, c.state)
		e := h.refused(PutOperationIntentCmd{Name: "h1", Kind: c.kind, Intent: wire.Intent{Mode: wire.RebootHard, Requester: "x"}}, wire.CodeConflict)
		if !strings.Contains(e.Message, c.want) || strings.Contains(e.Message, c.not) {
			t.Errorf("%s of a host %s: %q, want %q and not %q", c.kind, c.state, e.Message, c.want, c.not)
		}
	}
}
