package bmcaccount

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestRefusedChangeRetriedNeverLocksOut: a new holder whose lease is too
// short for the password change (the guard refuses to send it) retries
// many times, each time recording a new pending password the BMC never
// received. A retry must not try that password at the BMC: each such
// login fails, and the BMC's lockout threshold (5 for the default
// profile) would lock the tier's account for every holder. Once the
// lease allows it, the rotation completes.
func TestRefusedChangeRetriedNeverLocksOut(t *testing.T) {
	r := newRig(t, bmcsim.Config{})
	ctx := ctxT(t)
	if _, _, _, err := r.takeOver(nil).Credentials(ctx, r.target(), r.epoch); err != nil {
		t.Fatal(err)
	}
	r.takeOver(nil)
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Holder: holderName(r.n), Epoch: r.epoch, TTL: time.Minute, Deadline: time.Now().Add(time.Second)})
	m := New(Config{Store: r.agent, Guard: guard.NewGuard(h, nil)})
	for i := range 8 {
		if _, _, _, err := m.Credentials(ctx, r.target(), r.epoch); err == nil {
			t.Fatalf("attempt %d: the rotation went through a guard whose lease ends in a second", i)
		}
	}
	st := r.sim.State(0)
	if len(st.Lockouts) != 0 || len(st.FailedLogins) != 0 {
		t.Fatalf("retries of a change never sent: lockouts %+v, failed logins %v", st.Lockouts, st.FailedLogins)
	}
	h.Set(fence.Lease{Rack: "r1", Holder: holderName(r.n), Epoch: r.epoch, TTL: time.Minute, Deadline: time.Now().Add(time.Minute)})
	u, pw, off, err := m.Credentials(ctx, r.target(), r.epoch)
	if err != nil || off != "" || !r.works(u, pw) {
		t.Fatalf("once the lease allows it: off %q err %v", off, err)
	}
	r.noLockout()
}
