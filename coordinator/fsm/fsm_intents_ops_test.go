package fsm

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/api"
)

// opHost creates h1 in rack r1 and reports it in state under a lease.
func opHost(t *testing.T, state string) (*fsmT, api.Lease) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(api.Lease)
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: api.StatusReport{Epoch: l.Epoch, Status: api.HostStatus{ProvisioningState: state}}})
	return h, l
}

func TestRebootIntentAckAndDrop(t *testing.T) {
	h, l := opHost(t, api.StateProvisioned)
	in := h.ok(PutOperationIntentCmd{Name: "h1", Kind: api.IntentReboot, Intent: api.Intent{Mode: api.RebootSoft, Actor: "op", Acknowledged: true}}).(api.Intent)
	if in.CreatedIndex == 0 || in.Acknowledged || in.Mode != api.RebootSoft {
		t.Fatalf("reboot intent: %+v", in)
	}
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: api.StatusReport{Epoch: l.Epoch,
		Status: api.HostStatus{ProvisioningState: api.StateProvisioned}, Acks: []api.IntentAck{{Kind: api.IntentReboot, CreatedIndex: in.CreatedIndex, Drop: true}}}})
	if got, _ := h.f.Host("h1"); got.Intents != nil {
		t.Fatalf("reboot not dropped: %+v", got.Intents)
	}
}

func TestPowerOffHoldsByRequester(t *testing.T) {
	h, l := opHost(t, api.StateAvailable)
	a := h.ok(PutOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Intent: api.Intent{Mode: api.RebootHard, Requester: "a"}}).(api.Intent)
	b := h.ok(PutOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Intent: api.Intent{Mode: api.RebootSoft, Requester: "b"}}).(api.Intent)
	// The same request again changes nothing (no new index).
	a2 := h.ok(PutOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Intent: api.Intent{Mode: api.RebootHard, Requester: "a"}}).(api.Intent)
	if a2.CreatedIndex != a.CreatedIndex {
		t.Fatalf("repeated hold got a new index: %d vs %d", a2.CreatedIndex, a.CreatedIndex)
	}
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: api.StatusReport{Epoch: l.Epoch,
		Status: api.HostStatus{ProvisioningState: api.StateAvailable}, Acks: []api.IntentAck{{Kind: api.IntentPowerOff, CreatedIndex: b.CreatedIndex}}}})
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
	if !reflect.DeepEqual(g.s, h.f.s) {
		t.Fatalf("restored state differs:\n got %+v\nwant %+v", g.s.Hosts["h1"].Intents, h.f.s.Hosts["h1"].Intents)
	}

	h.ok(DeleteOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Requester: "a"})
	h.ok(DeleteOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Requester: "nobody"}) // nothing to withdraw: fine
	got, _ = h.f.Host("h1")
	if len(got.Intents.PowerOff) != 1 || got.Intents.PowerOff["b"] == nil {
		t.Fatalf("after withdrawing a: %+v", got.Intents.PowerOff)
	}
	h.ok(DeleteOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Requester: "b"})
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
		{"reboot while provisioning", api.StateProvisioning, api.IntentReboot, nil, "is provisioning"},
		{"reboot before registration", "", api.IntentReboot, nil, "not been registered"},
		{"inspect when provisioned", api.StateProvisioned, api.IntentInspect, nil, "only an available host"},
		{"power-off while inspecting", api.StateInspecting, api.IntentPowerOff, nil, "is inspecting"},
		{"reboot while detached", api.StateProvisioned, api.IntentReboot, func(h *fsmT) {
			h.ok(PutIntentCmd{Name: "h1", Kind: api.IntentDetach})
		}, "detached"},
		{"inspect while drained", api.StateAvailable, api.IntentInspect, func(h *fsmT) {
			h.ok(PutIntentCmd{Name: "h1", Kind: api.IntentDrain, Intent: api.Intent{Mode: api.DrainMaintenance}})
		}, "drained"},
		{"reboot of an offline host", api.StateProvisioned, api.IntentReboot, func(h *fsmT) {
			off := host("h1", "r1")
			off.Online = false
			h.ok(PutHostCmd{Host: off})
		}, "online: false"},
		{"reboot while being deleted", api.StateProvisioned, api.IntentReboot, func(h *fsmT) {
			h.ok(DeleteHostCmd{Name: "h1"})
		}, "being deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _ := opHost(t, c.state)
			if c.prep != nil {
				c.prep(h)
			}
			e := h.refused(PutOperationIntentCmd{Name: "h1", Kind: c.kind, Intent: api.Intent{Mode: api.RebootHard, Requester: "x"}}, api.CodeConflict)
			if !strings.Contains(e.Message, c.want) {
				t.Fatalf("refusal %q does not say %q", e.Message, c.want)
			}
		})
	}
	// A power-off of an offline host is fine (it stays off anyway).
	h, _ := opHost(t, api.StateProvisioned)
	off := host("h1", "r1")
	off.Online = false
	h.ok(PutHostCmd{Host: off})
	h.ok(PutOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Intent: api.Intent{Requester: "x"}})
	h.refused(PutOperationIntentCmd{Name: "nope", Kind: api.IntentReboot}, api.CodeNotFound)
	h.refused(PutOperationIntentCmd{Name: "h1", Kind: "dance"}, api.CodeBadRequest)
	h.refused(PutOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff}, api.CodeBadRequest) // no requester
}

// The new command types decode as themselves (and only from their own
// type byte); an older binary refuses them (ErrUnknownCommand) rather than
// applying them as something else.
func TestOperationIntentCommandsEncode(t *testing.T) {
	for _, c := range []Command{
		PutOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Intent: api.Intent{Requester: "k", Mode: api.RebootSoft}},
		DeleteOperationIntentCmd{Name: "h1", Kind: api.IntentPowerOff, Requester: "k"},
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
