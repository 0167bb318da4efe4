package agent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestRotationOnDemand: with a real agent running --bmc-account-rotation,
// an operator's request (what `rackfencectl credentials rotate` sends)
// makes the holder rotate the host's account again under the same epoch
// at its next look at the host: the record's rotatedAt moves and the
// request is dropped from the host.
func TestRotationOnDemand(t *testing.T) {
	testenv.SkipShort(t)
	e := newEnv(t, envOpts{bmcs: 1})
	e.apply(e.hostSpec("h0", "r1", 0))
	e.startAgent("r1", "a1", "--bmc-account-rotation")
	var first *wire.BMCAccount
	testenv.Eventually(t, 90*time.Second, "a1 rotated the account on takeover", func() error {
		rec, err := e.admin.GetBMCAccount(ctx(t), "h0", false, 0)
		if err != nil || rec.State != wire.BMCAccountConfirmed {
			return fmt.Errorf("BMC account %v %v", rec, err)
		}
		first = rec
		return nil
	})
	it, err := e.admin.RotateBMCAccount(ctx(t), "h0", "on demand")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, "a1 answered the request", func() error {
		h := e.host("h0")
		if h.Intents != nil && h.Intents.RotateCredentials != nil {
			return fmt.Errorf("request %d still waits", h.Intents.RotateCredentials.CreatedIndex)
		}
		return nil
	})
	rec, err := e.admin.GetBMCAccount(ctx(t), "h0", false, 0)
	if err != nil || rec.State != wire.BMCAccountConfirmed || rec.Epoch != first.Epoch || !rec.RotatedAt.After(first.RotatedAt) || rec.Index <= it.CreatedIndex {
		t.Fatalf("after the request (index %d): %v %v; before %v", it.CreatedIndex, rec, err, first)
	}
	t.Logf("rotated on demand under epoch %d: rotatedAt %s -> %s", rec.Epoch, first.RotatedAt.Format(time.RFC3339Nano), rec.RotatedAt.Format(time.RFC3339Nano))
}
