package agent

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/shared/wire"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want hoststate.ErrClass
	}{
		{nil, hoststate.ErrNone},
		{fmt.Errorf("power on: %w", guard.ErrFenced), hoststate.ErrClassFenced},
		{fmt.Errorf("%w: 401", errclass.ErrAuth), hoststate.ErrClassAuth},
		{fmt.Errorf("%w: timeout", errclass.ErrTransient), hoststate.ErrClassTransient},
		{fmt.Errorf("%w: gone", errclass.ErrNotFound), hoststate.ErrClassNotFound},
		{fmt.Errorf("%w: no media", errclass.ErrUnsupported), hoststate.ErrClassFailed},
		{fmt.Errorf("%w: refused", errclass.ErrFailed), hoststate.ErrClassFailed},
		{errors.New("something else"), hoststate.ErrClassFailed},
	} {
		if got := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestSameStatusIgnoresStamps(t *testing.T) {
	a := &wire.HostStatus{ProvisioningState: "available", OperationalStatus: "ok", Epoch: 3, LastUpdated: time.Now()}
	b := &wire.HostStatus{ProvisioningState: "available", OperationalStatus: "ok", Epoch: 9, Extra: map[string]string{}}
	if !sameStatus(a, b) {
		t.Fatal("statuses differing only in epoch, lastUpdated and an empty Extra must compare equal")
	}
	b.ErrorCount = 1
	if sameStatus(a, b) {
		t.Fatal("a different errorCount must compare different")
	}
	if sameStatus(nil, a) || !sameStatus(nil, nil) {
		t.Fatal("nil handling")
	}
}

func TestStoreWakesOnlyOnInputChanges(t *testing.T) {
	s := newStore()
	h := wire.Host{Name: "h", Rack: "r", Online: true, ModifiedIndex: 5,
		Status: &wire.HostStatus{ProvisioningState: "available"}}
	if !s.upsert(h) {
		t.Fatal("a new host must wake")
	}
	h.ModifiedIndex = 6
	h.Status = &wire.HostStatus{ProvisioningState: "available", ErrorCount: 2}
	if s.upsert(h) {
		t.Fatal("a status-only change (our own write coming back) must not wake the host")
	}
	s.with("h", func(e *hostEntry) {
		if e.status.ErrorCount != 0 {
			t.Fatal("the coordinator's status must not replace the session's own")
		}
	})
	h.ModifiedIndex = 7
	h.Labels = map[string]string{"role": "compute"}
	if s.upsert(h) {
		t.Fatal("a labels-only change must not wake the host (the state machine does not read labels)")
	}
	h.Intents = &wire.Intents{Detach: &wire.Intent{CreatedIndex: 7}}
	if !s.upsert(h) {
		t.Fatal("a new intent must wake the host")
	}
	h.Online = false
	if !s.upsert(h) {
		t.Fatal("a spec change must wake the host")
	}
}

func TestApplyAcks(t *testing.T) {
	h := wire.Host{Intents: &wire.Intents{
		Detach: &wire.Intent{CreatedIndex: 5},
		Resume: &wire.Intent{CreatedIndex: 6},
		Drain:  &wire.Intent{CreatedIndex: 9, Mode: wire.DrainMaintenance},
	}}
	orig := h.Intents
	applyAcks(&h, []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: 5}, {Kind: wire.IntentResume, CreatedIndex: 6, Drop: true},
		{Kind: wire.IntentDrain, CreatedIndex: 8}}, 42)
	if d := h.Intents.Detach; !d.Acknowledged || d.AckEpoch != 42 {
		t.Errorf("detach %+v, want acknowledged under epoch 42", d)
	}
	if h.Intents.Resume != nil {
		t.Errorf("resume not dropped")
	}
	if h.Intents.Drain.Acknowledged {
		t.Errorf("an ack for an older drain (createdIndex 8) acknowledged the newer one (9)")
	}
	if orig.Detach.Acknowledged || orig.Resume == nil {
		t.Errorf("applyAcks changed the watch's copy in place")
	}
}

func TestApplyAcksOperationIntents(t *testing.T) {
	h := wire.Host{Intents: &wire.Intents{
		Reboot:   &wire.Intent{CreatedIndex: 5, Mode: wire.RebootSoft},
		Inspect:  &wire.Intent{CreatedIndex: 6},
		PowerOff: map[string]*wire.Intent{"a": {CreatedIndex: 7, Requester: "a"}, "b": {CreatedIndex: 8, Requester: "b"}},
	}}
	orig := h.Intents
	applyAcks(&h, []wire.IntentAck{{Kind: wire.IntentReboot, CreatedIndex: 5, Drop: true},
		{Kind: wire.IntentInspect, CreatedIndex: 4, Drop: true}, {Kind: wire.IntentPowerOff, CreatedIndex: 8}}, 42)
	if h.Intents.Reboot != nil {
		t.Errorf("reboot not dropped")
	}
	if h.Intents.Inspect == nil {
		t.Errorf("an ack for an older inspect (4) dropped the newer one (6)")
	}
	if a, b := h.Intents.PowerOff["a"], h.Intents.PowerOff["b"]; a.Acknowledged || !b.Acknowledged || b.AckEpoch != 42 {
		t.Errorf("holds a %+v b %+v, want only b acknowledged under epoch 42", a, b)
	}
	if orig.Reboot == nil || orig.PowerOff["b"].Acknowledged {
		t.Errorf("applyAcks changed the watch's copy in place")
	}
}
