package fsm

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestBMCRotationRequest: an on-demand rotation is refused while the host
// has no BMC account record and while its record says the fence at the
// BMC is off (both saying what to do), and for a detached host; it is
// recorded once as the host's intents.rotateCredentials; the holder's
// confirm naming it drops it, a confirm naming another request does not.
func TestBMCRotationRequest(t *testing.T) {
	h, l := opHost(t, wire.StateProvisioned)
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	req := RequestBMCRotationCmd{Name: "h1", Actor: "ops", Reason: "audit", Time: at}
	if e := h.refused(req, wire.CodeConflict); !strings.Contains(e.Message, "--bmc-account-rotation") {
		t.Errorf("no record: %v", e)
	}
	w := func(op string, request uint64) BMCAccountCmd {
		c := BMCAccountCmd{Rack: "r1", Name: "h1", Epoch: l.Epoch, Op: op, Request: request, Time: at}
		if op == wire.BMCAccountOpPending {
			c.Username, c.Sealed = "rackfence", sealedPW("1")
		}
		return c
	}
	h.ok(w(wire.BMCAccountOpPending, 0))
	h.ok(w(wire.BMCAccountOpConfirm, 0))

	it := h.ok(req).(wire.Intent)
	if it.CreatedIndex == 0 || it.Actor != "ops" {
		t.Fatalf("request: %+v", it)
	}
	if again := h.ok(req).(wire.Intent); again.CreatedIndex != it.CreatedIndex {
		t.Errorf("a second request while one waits made another: %+v", again)
	}
	if evs := events(t, h.f); evs[len(evs)-1].Reason != wire.ReasonBMCAccountRotationRequested {
		t.Errorf("no request event: %+v", evs[len(evs)-1])
	}
	request := func() *wire.Intent {
		hs, _ := h.f.Host("h1")
		if hs.Intents == nil {
			return nil
		}
		return hs.Intents.RotateCredentials
	}
	h.ok(w(wire.BMCAccountOpPending, 0))
	h.ok(w(wire.BMCAccountOpConfirm, it.CreatedIndex+1))
	if request() == nil {
		t.Fatal("a confirm naming another request dropped this one")
	}
	h.ok(w(wire.BMCAccountOpPending, 0))
	h.ok(w(wire.BMCAccountOpConfirm, it.CreatedIndex))
	if r := request(); r != nil {
		t.Fatalf("the confirm answering the request left it: %+v", r)
	}

	// Off answers a request too, and then refuses the next one.
	it = h.ok(req).(wire.Intent)
	off := w(wire.BMCAccountOpOff, it.CreatedIndex)
	off.Reason = "the BMC has no free account slot"
	h.ok(off)
	if request() != nil {
		t.Fatal("an off write answering the request left it")
	}
	if e := h.refused(req, wire.CodeConflict); !strings.Contains(e.Message, "no free account slot") {
		t.Errorf("off: %v", e)
	}
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{}})
	if e := h.refused(req, wire.CodeConflict); !strings.Contains(e.Message, "detached") {
		t.Errorf("detached: %v", e)
	}
}
