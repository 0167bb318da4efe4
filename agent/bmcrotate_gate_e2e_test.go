package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestRotationAfterVersionGateOpens: an agent with --bmc-account-rotation
// takes a rack while the coordinator's version gate refuses BMC account
// writes (upgrade_required: a voter whose version the leader has not
// recorded, as in the first seconds of a new cluster). It changes nothing
// at the BMC meanwhile; once the gate opens it rotates the account under
// the same lease, and the host's next change at the BMC is made with the
// tier's account, not the operator's.
//
// The gate is held closed by a third voter that never answers (its
// addresses listen to nothing): n1 and n2 are a quorum, and the leader
// never records the third's version. Removing it opens the gate.
func TestRotationAfterVersionGateOpens(t *testing.T) {
	testenv.SkipShort(t)
	e := newEnv(t, envOpts{bmcs: 1})
	e.apply(e.hostSpec("h0", "r1", 0))
	rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{NodeID: "n2", Join: e.c})
	testenv.Eventually(t, 90*time.Second, "n2 joined and its version recorded", func() error {
		st, err := e.admin.Status(ctx(t))
		if err != nil {
			return err
		}
		for _, m := range st.Members {
			if m.ID == "n2" && m.Version != "" && !strings.HasPrefix(m.Version, "legacy") {
				return nil
			}
		}
		return fmt.Errorf("members %+v", st.Members)
	})
	ghost := wire.JoinRequest{ID: "ghost", RaftAddr: fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1")),
		HTTPAddr: fmt.Sprintf("https://127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))}
	if err := e.admin.Join(ctx(t), ghost); err != nil {
		t.Fatal(err)
	}

	a1 := e.startAgent("r1", "a1", "--bmc-account-rotation")
	h := e.waitHost("h0", 90*time.Second, "available and on under a1's lease", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		if !h.Status.PoweredOn {
			return fmt.Errorf("not powered on yet")
		}
		return nil
	})
	epoch := h.Status.Epoch
	testenv.Eventually(t, 90*time.Second, "a1 found the account write refused by the gate", func() error {
		if !strings.Contains(a1.Output(), "cannot record BMC accounts yet") {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	for _, l := range e.s.AuditLines(0) {
		if l.SetAccount != "" {
			t.Fatalf("the BMC's accounts were changed while the coordinator could not record them: %+v", l)
		}
	}

	if err := e.admin.RemoveMember(ctx(t), ghost.ID); err != nil {
		t.Fatal(err)
	}
	var rec *wire.BMCAccount
	testenv.Eventually(t, 90*time.Second, "a1 rotated the account once the gate opened", func() error {
		r, err := e.admin.GetBMCAccount(ctx(t), "h0", false, 0)
		if err != nil || r.State != wire.BMCAccountConfirmed {
			return fmt.Errorf("BMC account %+v %v", r, err)
		}
		rec = r
		return nil
	})
	if rec.Epoch != epoch {
		t.Fatalf("rotated under epoch %d, want a1's lease %d (the fence must turn on under the same lease)", rec.Epoch, epoch)
	}

	off := e.host("h0")
	off.Online = false
	e.apply(off)
	e.waitHost("h0", 90*time.Second, "powered off", func(h *wire.Host) error {
		if h.Status == nil || h.Status.PoweredOn {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	var resets []string
	for _, l := range e.s.AuditLines(0) {
		if strings.Contains(l.Path, "ComputerSystem.Reset") && l.Status/100 == 2 {
			resets = append(resets, l.User)
		}
	}
	if len(resets) == 0 || resets[len(resets)-1] != rec.Username {
		t.Fatalf("resets authenticated as %v, want the last as the tier's account %q", resets, rec.Username)
	}
	t.Logf("epoch %d: account %s rotated at %s after the gate opened; the power-off used it", epoch, rec.Username, rec.RotatedAt.Format(time.RFC3339Nano))
}
