package bmcaccount

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestRotateOnDemand: `rackfencectl credentials rotate` before the host
// has an account is refused, saying the agent does not rotate it; once
// the holder has rotated, a request makes the same holder (same epoch)
// rotate again at its next call: a new password the BMC takes, the old
// one refused, the record's rotatedAt moved and the request dropped by
// the confirm. The request is answered once.
func TestRotateOnDemand(t *testing.T) {
	r := newRig(t, bmcsim.Config{})
	ctx := ctxT(t)
	ops := r.c.Client(wire.RoleOperator, "")
	if _, err := ops.RotateBMCAccount(ctx, "h0", "before"); err == nil || !strings.Contains(err.Error(), "--bmc-account-rotation") {
		t.Fatalf("a request before any rotation: %v", err)
	}
	m := r.takeOver(nil)
	_, pw1, _, err := m.Credentials(ctx, r.target(), r.epoch)
	if err != nil {
		t.Fatal(err)
	}
	before := r.record()
	it, err := ops.RotateBMCAccount(ctx, "h0", "quarterly audit")
	if err != nil {
		t.Fatal(err)
	}
	h := r.c.Host("h0")
	if h.Intents == nil || h.Intents.RotateCredentials == nil || h.Intents.RotateCredentials.CreatedIndex != it.CreatedIndex {
		t.Fatalf("the request is not on the host: %+v", h.Intents)
	}
	if m.Rotated("h0", r.epoch, it.CreatedIndex) {
		t.Fatal("a waiting request reads as settled")
	}
	tg := r.target()
	tg.Requested = it.CreatedIndex
	u, pw2, off, err := m.Credentials(ctx, tg, r.epoch)
	if err != nil || off != "" || pw2 == pw1 {
		t.Fatalf("on demand: off %q err %v same %v", off, err, pw2 == pw1)
	}
	if !r.works(u, pw2) || r.works(u, pw1) {
		t.Error("after the rotation on demand the BMC does not take the new password, or still takes the old one")
	}
	after := r.record()
	if after.State != wire.BMCAccountConfirmed || after.Password != pw2 || after.Index <= before.Index || after.RotatedAt.Before(before.RotatedAt) {
		t.Fatalf("record after the rotation on demand: %v (before %v)", after, before)
	}
	if h := r.c.Host("h0"); h.Intents != nil && h.Intents.RotateCredentials != nil {
		t.Fatalf("the confirm did not drop the request: %+v", h.Intents.RotateCredentials)
	}
	if _, pw3, _, _ := m.Credentials(ctx, tg, r.epoch); pw3 != pw2 {
		t.Error("an answered request rotated again")
	}
	r.noLockout()

	// The fence at the BMC off: refused with its reason.
	if _, err := r.agent.PutBMCAccount(ctx, "h0", wire.BMCAccountWrite{Epoch: r.epoch, Op: wire.BMCAccountOpOff, Reason: "no free account slot"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.RotateBMCAccount(ctx, "h0", ""); err == nil || !strings.Contains(err.Error(), "no free account slot") {
		t.Fatalf("a request with the fence off: %v", err)
	}
	if _, err := ops.RotateBMCAccount(ctx, "nope", ""); !client.IsNotFound(err) {
		t.Fatalf("unknown host: %v", err)
	}
}
