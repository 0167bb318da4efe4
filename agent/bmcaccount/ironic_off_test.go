package bmcaccount

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestIronicPathRecordsFenceOff: with --provisioner ironic the manager
// (Config.Off) uses the operator's credentials, asks nothing of the BMC,
// and the host's record says the fence at the BMC is off on that path and
// why (Ironic's driver_info), once per epoch; an on-demand rotation is
// then refused with that reason.
func TestIronicPathRecordsFenceOff(t *testing.T) {
	r := newRig(t, bmcsim.Config{})
	ctx := ctxT(t)
	m := r.takeOver(nil)
	m.cfg.Off = OffIronic
	u, pw, off, err := m.Credentials(ctx, r.target(), r.epoch)
	if err != nil || u != "admin" || pw != "password" || off != OffIronic {
		t.Fatalf("got %q off %q err %v", u, off, err)
	}
	rec, err := r.c.Admin.GetBMCAccount(ctx, "h0", false, 0)
	if err != nil || rec.State != wire.BMCAccountOff || !strings.Contains(rec.Reason, "driver_info") {
		t.Fatalf("record %v %v", rec, err)
	}
	if _, _, _, err := m.Credentials(ctx, r.target(), r.epoch); err != nil {
		t.Fatal(err)
	}
	if again, _ := r.c.Admin.GetBMCAccount(ctx, "h0", false, 0); again.Index != rec.Index {
		t.Errorf("a second call under the same epoch wrote the record again (index %d -> %d)", rec.Index, again.Index)
	}
	if accts, _ := r.sim.Accounts(0); len(accts) != 1 {
		t.Fatalf("the BMC was changed: %+v", accts)
	}
	if _, err := r.c.Client(wire.RoleOperator, "").RotateBMCAccount(ctx, "h0", ""); err == nil || !strings.Contains(err.Error(), "--provisioner ironic") {
		t.Fatalf("on-demand rotation on the Ironic path: %v", err)
	}
}
