package agent_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestRotationOnDemand: with a real agent running --bmc-account-rotation,
// an operator's request (what `rackfencectl credentials rotate` sends)
// makes the holder rotate the host's account again under the same epoch
// at its next look at the host: the record's rotatedAt moves and the
// request is dropped from the host. Then a detach disables the account on
// the BMC before the agent acknowledges it (the record is kept), and the
// attach after it rotates the password and enables the account again.
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

	if _, err := e.admin.Detach(ctx(t), "h0", wire.IntentRequest{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	e.waitHost("h0", 90*time.Second, "detach acknowledged", func(h *wire.Host) error {
		if h.Intents == nil || h.Intents.Detach == nil || !h.Intents.Detach.Acknowledged {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		return nil
	})
	if en, ok := e.simAccountEnabled(0, rec.Username); !ok || en {
		t.Fatalf("account %s after the detach: present %v enabled %v, want disabled", rec.Username, ok, en)
	}
	if err := e.admin.Attach(ctx(t), "h0"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, "the account rotated and enabled after the attach", func() error {
		r, err := e.admin.GetBMCAccount(ctx(t), "h0", false, 0)
		if err != nil || r.State != wire.BMCAccountConfirmed || !r.RotatedAt.After(rec.RotatedAt) {
			return fmt.Errorf("record %v %v", r, err)
		}
		if en, _ := e.simAccountEnabled(0, rec.Username); !en {
			return fmt.Errorf("account %s still disabled", rec.Username)
		}
		return nil
	})
	t.Logf("rotated on demand under epoch %d: rotatedAt %s -> %s", rec.Epoch, first.RotatedAt.Format(time.RFC3339Nano), rec.RotatedAt.Format(time.RFC3339Nano))
}

// simAccountEnabled reads BMC i's account table (GET /sim/accounts).
func (e *env) simAccountEnabled(i int, user string) (enabled, ok bool) {
	e.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/sim/accounts", e.s.Base+i))
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Accounts []struct {
			UserName string `json:"userName"`
			Enabled  bool   `json:"enabled"`
		} `json:"accounts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		e.t.Fatal(err)
	}
	for _, a := range out.Accounts {
		if a.UserName == user {
			return a.Enabled, true
		}
	}
	return false, false
}
