package bmcaccount

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	tkrig "github.com/rackfence/rackfence/testkit/rig"
)

// ipmiRig is the rig with host h0 on openipmi's ipmi_sim (real ipmitool).
func ipmiRig(t *testing.T) *rig {
	r := newRig(t, bmcsim.Config{})
	sim := tkrig.StartIPMISim(t)
	r.addr = sim.Addr
	h := r.c.Host("h0")
	h.BMC.Address = sim.Addr
	r.c.Apply(h)
	x, err := newIPMI(sim.Addr, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r.works = func(user, pw string) bool {
		ok, err := x.loginWorks(context.Background(), user, pw)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	return r
}

// TestIPMIRotation: over IPMI (real ipmitool against ipmi_sim) the tier's
// user takes a free slot, its password is set with `user set password`
// and rotated on takeover (the old one refused), the operator's user is
// untouched, and a death between the steps that leave the BMC and the
// coordinator apart leaves a working password.
func TestIPMIRotation(t *testing.T) {
	r := ipmiRig(t)
	ctx := ctxT(t)
	a := r.takeOver(nil)
	u, pw1, off, err := a.Credentials(ctx, r.target(), r.epoch)
	if err != nil || off != "" || u != DefaultUsername || len(pw1) != 16 || strings.ContainsAny(pw1, "#") {
		t.Fatalf("first holder: %q off %q err %v", u, off, err)
	}
	b := r.takeOver(nil)
	_, pw2, off, err := b.Credentials(ctx, r.target(), r.epoch)
	if err != nil || off != "" || pw2 == pw1 {
		t.Fatalf("second holder: off %q err %v", off, err)
	}
	if r.works(u, pw1) || !r.works(u, pw2) || !r.works("admin", "password") {
		t.Fatal("after the takeover: the old password works, or the new one or the operator's does not")
	}
	if rec := r.record(); rec.State != wire.BMCAccountConfirmed || rec.Password != pw2 {
		t.Fatalf("record %v", rec)
	}
	// The deaths that leave the BMC and the coordinator apart: after the
	// pending write, and after the BMC took the password (the other steps
	// are the same code as over Redfish, TestKillAtEveryStepNeverLocksOut).
	killEverywhere(t, r, []string{StepPending, StepBMC})
}
